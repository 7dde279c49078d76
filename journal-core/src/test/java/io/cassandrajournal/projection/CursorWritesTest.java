package io.cassandrajournal.projection;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryDurableStateStore;
import io.cassandrajournal.query.TagOffset;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cursor-write recorder of the shared-projection tests reads a write's offset and epoch from the JSON that is
 * stored, whatever class the offset store hands it: commit f6d73bf wrote a by-tag segment's cursor as a record of
 * its own, which the recorders then cast to {@link TagOffset} and threw on, so every fence failed, every lease taken
 * was released at once, and SharedProjectionsIT and SharedProjectionMultiJvmIT timed out waiting for owners.
 */
class CursorWritesTest {

	/** The JSON shape f6d73bf wrote for a cursor under a lease without a recorded lease row. */
	record EpochCursor(long timestamp, String persistenceId, long sequenceNr, long epoch) {
	}

	record Recorded(String key, long revision, TagOffset offset, long epoch, boolean applied) {
	}

	private final List<Recorded> recorded = new CopyOnWriteArrayList<>();

	private final InMemoryDurableStateStore state = new InMemoryDurableStateStore();

	private final CursorWrites writes = new CursorWrites(this.state,
			(key, revision, offset, epoch, error) -> this.recorded.add(new Recorded(key, revision, offset, epoch,
					error == null)));

	@Test
	void everyCursorTheOffsetStoreWritesIsRecordedWithItsEpoch() {
		DurableStateOffsetStore offsets = new DurableStateOffsetStore(this.writes);
		ProjectionId plain = ProjectionId.byPersistenceId("plain", "a");
		ProjectionId fenced = ProjectionId.byPersistenceId("fenced", "b");
		result(offsets.save(plain, new TagOffset(5, "a", 1)));
		result(offsets.fence(fenced, TagOffset.START, 3));
		result(offsets.save(fenced, new TagOffset(7, "b", 2), 3));
		result(offsets.save(fenced, new TagOffset(8, "b", 3), 3, "0-511"));

		assertThat(this.recorded).extracting(Recorded::key, Recorded::revision, Recorded::epoch, Recorded::applied)
			.containsExactly(
					org.assertj.core.groups.Tuple.tuple(DurableStateOffsetStore.key(plain), 1L, 0L, true),
					org.assertj.core.groups.Tuple.tuple(DurableStateOffsetStore.key(fenced), 1L, 3L, true),
					org.assertj.core.groups.Tuple.tuple(DurableStateOffsetStore.key(fenced), 2L, 3L, true),
					org.assertj.core.groups.Tuple.tuple(DurableStateOffsetStore.key(fenced), 3L, 3L, true),
					org.assertj.core.groups.Tuple.tuple(DurableStateOffsetStore.key(fenced), 4L, 3L, true));
		assertThat(this.recorded.get(4).offset()).isEqualTo(new TagOffset(8, "b", 3));
	}

	@Test
	void aCursorOfAnotherJsonShapeIsRecordedFromItsJsonAndStored() {
		String key = DurableStateOffsetStore.key(ProjectionId.byPersistenceId("other", "c"));

		result(this.writes.upsert(key, 1, new EpochCursor(9, "c", 4, 2)));

		assertThat(this.recorded).containsExactly(new Recorded(key, 1, new TagOffset(9, "c", 4), 2, true));
		DurableStateOffsetStore.StoredCursor stored = result(
				this.state.get(key, DurableStateOffsetStore.StoredCursor.class)).orElseThrow().value();
		assertThat(stored.cursor()).isEqualTo(new DurableStateOffsetStore.Cursor(new TagOffset(9, "c", 4), 2));
	}

}
