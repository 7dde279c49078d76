package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.internal.TagPartitions.TagRow;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How the tag rows of an append written events first are cut into logged batches holding every copy of a row:
 * in order, each batch under {@link AppendWriter#ATOMIC_BATCH_MAX_BYTES} with its copies (as {@link BatchBytes}
 * counts them), a row too large for that
 * alone in its batch.
 */
class TagCopyWritesTest {

	private static TagRow row(long sequenceNr, int payloadBytes) {
		return new TagRow("tag", 1_000L, "entity", sequenceNr, "p".repeat(payloadBytes), Set.of("tag"));
	}

	private static long bytes(List<TagRow> rows, int copies) {
		return BatchBytes.tagRows(rows, copies, false);
	}

	@Test
	void rowsAreCutInOrderIntoBatchesUnderTheLimitWithAllTheirCopies() {
		List<TagRow> rows = new ArrayList<>();
		for (int i = 1; i <= 20; i++) {
			rows.add(row(i, 3_000));
		}
		List<List<TagRow>> batches = TagCopyWrites.batches(rows, 2, false);

		assertThat(batches).hasSizeGreaterThan(1);
		assertThat(batches.stream().flatMap(List::stream).toList()).containsExactlyElementsOf(rows);
		for (int i = 0; i < batches.size(); i++) {
			assertThat(bytes(batches.get(i), 2)).isLessThanOrEqualTo(AppendWriter.ATOMIC_BATCH_MAX_BYTES);
			if (i + 1 < batches.size()) {
				// Cut only where the next row would pass the limit.
				List<TagRow> withNext = new ArrayList<>(batches.get(i));
				withNext.add(batches.get(i + 1).get(0));
				assertThat(bytes(withNext, 2)).isGreaterThan(AppendWriter.ATOMIC_BATCH_MAX_BYTES);
			}
		}
	}

	@Test
	void aRowTooLargeForOneBatchWithItsCopiesGoesAlone() {
		List<TagRow> rows = List.of(row(1, 100), row(2, 30_000), row(3, 100));

		assertThat(TagCopyWrites.batches(rows, 2, false)).containsExactly(List.of(rows.get(0)), List.of(rows.get(1)),
				List.of(rows.get(2)));
		assertThat(TagCopyWrites.batches(rows, 1, false)).containsExactly(rows);
	}

}
