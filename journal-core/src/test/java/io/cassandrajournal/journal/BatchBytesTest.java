package io.cassandrajournal.journal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.cassandrajournal.internal.TagPartitions.TagRow;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The estimate of a logged batch against what Cassandra 5.0 counts for {@code batch_size_fail_threshold}
 * ({@code BatchStatement.verifyBatchSize}: the sum of {@code PartitionUpdate.dataSize()}, read in the bytecode of
 * cassandra-all 5.0.9), written out here independently of the code under test:
 * <ul>
 * <li>per partition: its deletion info 8 and the empty static row 21 (liveness 8, row deletion 13);</li>
 * <li>per row: its clustering values, liveness 8 (20 with a TTL: ttl 4 and expiration time 8), row deletion 13
 * (deletion time 12 + 1);</li>
 * <li>per simple cell: 20 (timestamp 8, ttl 4, local deletion time 8, a long since 5.0) and the value;</li>
 * <li>per set: its complex deletion 12, per element a cell of 20 and the element.</li>
 * </ul>
 * {@code TagCopyBatchIT} checks the same estimate against the size the node reports for real batches.
 */
class BatchBytesTest {

	private static final int PARTITION = 8 + 8 + 13;

	private static long utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8).length;
	}

	/** One tag row as the node counts it: clustering (timestamp, persistence_id, sequence_nr), payload, tags. */
	private static long serverTagRow(TagRow row, boolean ttl) {
		long bytes = 8 + utf8(row.persistenceId()) + 8;
		bytes += ttl ? 20 : 8;
		bytes += 13;
		bytes += 20 + utf8(row.payload());
		bytes += 12;
		for (String tag : row.tags()) {
			bytes += 20 + utf8(tag);
		}
		return bytes;
	}

	private static List<TagRow> rows(int count, int payloadBytes, int tags) {
		Set<String> all = new LinkedHashSet<>();
		for (int t = 0; t < tags; t++) {
			all.add((t == 0) ? "orders" : "tag-\u00e9t\u00e9-" + t);
		}
		List<TagRow> rows = new ArrayList<>();
		for (int i = 1; i <= count; i++) {
			rows.add(new TagRow("orders", 1_000L, "order-4711", i, "p".repeat(payloadBytes), all));
		}
		return rows;
	}

	@ParameterizedTest
	@CsvSource({ "1, 300, 1, 2, false", "63, 300, 1, 2, false", "200, 300, 1, 2, true", "15, 1000, 3, 2, false",
			"130, 100, 1, 1, true", "1, 30000, 2, 2, false" })
	void theEstimateOfTagRowsIsWhatTheNodeCounts(int count, int payloadBytes, int tags, int copies, boolean ttl) {
		List<TagRow> rows = rows(count, payloadBytes, tags);
		// One tag, one entity, one time stamp: each copy's rows in one partition.
		long server = copies * PARTITION;
		for (TagRow row : rows) {
			server += copies * serverTagRow(row, ttl);
		}

		assertThat(BatchBytes.tagRows(rows, copies, ttl)).isEqualTo(server);
	}

	/**
	 * The events rows of an append (clustering sequence_nr; timestamp, payload and tags) and the head update
	 * (metadata, a partition of its own: no primary key liveness but its time stamp, max_sequence_nr, updated_at).
	 */
	@ParameterizedTest
	@CsvSource({ "1, 300, 1, 1, true", "20, 1000, 3, 1, false", "200, 100, 0, 2, true" })
	void theEstimateOfEventRowsIsWhatTheNodeCounts(int count, int payloadBytes, int tags, int partitions,
			boolean head) {
		List<String> payloads = new ArrayList<>();
		List<Set<String>> tagSets = new ArrayList<>();
		long server = (long) partitions * PARTITION + (head ? PARTITION + 8 + 13 + 2 * (20 + 8) : 0);
		for (int i = 0; i < count; i++) {
			String payload = "\u00e9".repeat(payloadBytes / 2);
			Set<String> set = new LinkedHashSet<>(rows(1, 0, tags).get(0).tags());
			if (tags == 0) {
				set.clear();
			}
			payloads.add(payload);
			tagSets.add(set);
			server += 8 + 8 + 13 + (20 + 8) + (20 + utf8(payload)) + 12;
			for (String tag : set) {
				server += 20 + utf8(tag);
			}
		}

		assertThat(BatchBytes.events(payloads, tagSets, partitions, head)).isEqualTo(server);
	}

}
