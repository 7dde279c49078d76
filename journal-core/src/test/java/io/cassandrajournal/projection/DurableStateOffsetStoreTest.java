package io.cassandrajournal.projection;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryDurableStateStore;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateStore;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/** The cached revision of a cursor, when reads and saves of it overlap. */
class DurableStateOffsetStoreTest {

	private static TagOffset at(long timestamp) {
		return new TagOffset(timestamp, "p", timestamp);
	}

	@Test
	void aLoadThatReadBeforeASaveLandedDoesNotMoveTheCachedRevisionBack() {
		HeldReads store = new HeldReads(new InMemoryDurableStateStore());
		DurableStateOffsetStore offsets = new DurableStateOffsetStore(store);
		ProjectionId id = new ProjectionId("view", "key");
		result(offsets.save(id, at(1)));

		CompletableFuture<Void> release = store.holdNextRead();
		CompletionStage<Optional<TagOffset>> slowLoad = offsets.load(id);
		result(offsets.save(id, at(2)));
		release.complete(null);
		assertThat(result(slowLoad)).contains(at(1));

		result(offsets.save(id, at(3)));
		assertThat(result(new DurableStateOffsetStore(store).load(id))).contains(at(3));
	}

	/** Reads at once but answers a held read only when released: an answer that arrives late. */
	private static final class HeldReads implements DurableStateStore {

		private final DurableStateStore delegate;

		private volatile CompletableFuture<Void> held = CompletableFuture.completedFuture(null);

		HeldReads(DurableStateStore delegate) {
			this.delegate = delegate;
		}

		CompletableFuture<Void> holdNextRead() {
			this.held = new CompletableFuture<>();
			return this.held;
		}

		@Override
		public <S> CompletionStage<Optional<DurableState<S>>> get(String persistenceId, Class<S> type) {
			CompletableFuture<Void> gate = this.held;
			this.held = CompletableFuture.completedFuture(null);
			return this.delegate.get(persistenceId, type).thenCombine(gate, (state, ignored) -> state);
		}

		@Override
		public CompletionStage<Void> upsert(String persistenceId, long revision, Object value) {
			return this.delegate.upsert(persistenceId, revision, value);
		}

		@Override
		public CompletionStage<Void> delete(String persistenceId, long revision) {
			return this.delegate.delete(persistenceId, revision);
		}

	}

}
