package io.cassandrajournal.projection;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateStore;

/**
 * Offsets kept in a {@link DurableStateStore} (in Cassandra: the {@code durable_state} table), under the
 * key {@code projection-offset|<name>|<key>}. Every save is a compare-and-set on the revision this instance
 * last read or wrote, so two instances running the same projection cannot silently overwrite each other's
 * cursor: the second one's save fails with a
 * {@link io.cassandrajournal.state.DurableStateConflictException} (the basis for fenced cursor writes once
 * projections are shared by leases).
 */
public final class DurableStateOffsetStore implements OffsetStore {

	private final DurableStateStore store;

	private final Map<ProjectionId, Long> revisions = new ConcurrentHashMap<>();

	/** @param store the durable state store */
	public DurableStateOffsetStore(DurableStateStore store) {
		this.store = store;
	}

	static String key(ProjectionId id) {
		return "projection-offset|" + id.name() + "|" + id.key();
	}

	@Override
	public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
		return this.store.get(key(id), TagOffset.class).thenApply((state) -> {
			this.revisions.put(id, state.map(DurableState::revision).orElse(0L));
			return state.map(DurableState::value);
		});
	}

	@Override
	public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
		CompletionStage<Long> revision = this.revisions.containsKey(id)
				? CompletableFuture.completedFuture(this.revisions.get(id))
				: load(id).thenApply((ignored) -> this.revisions.get(id));
		return revision.thenCompose((current) -> this.store.upsert(key(id), current + 1, offset)
			.thenRun(() -> this.revisions.put(id, current + 1)));
	}

	@Override
	public CompletionStage<Void> delete(ProjectionId id) {
		return this.store.get(key(id), TagOffset.class).thenCompose((state) -> {
			this.revisions.remove(id);
			return state.isPresent() ? this.store.delete(key(id), state.get().revision())
					: CompletableFuture.<Void>completedFuture(null);
		});
	}

}
