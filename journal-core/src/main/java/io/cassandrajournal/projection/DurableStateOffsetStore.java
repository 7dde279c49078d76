package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateConflictException;
import io.cassandrajournal.state.DurableStateStore;

/**
 * Offsets kept in a {@link DurableStateStore} (in Cassandra: the {@code durable_state} table), under the
 * key {@code projection-offset|<name>|<key>}. Every save is a compare-and-set on the revision this instance
 * last read or wrote, so two instances running the same projection cannot silently overwrite each other's
 * cursor: the second one's save fails with a
 * {@link io.cassandrajournal.state.DurableStateConflictException} (the basis for fenced cursor writes once
 * projections are shared by leases).
 * <p>
 * A save whose outcome is unknown (its compare-and-set timed out, and may have applied) is remembered; when the
 * next save then conflicts, the row is read, and if it holds exactly that save (its revision and offset), this
 * instance's revision moves to it and the save is tried again. Another writer's save still fences this one.
 */
public final class DurableStateOffsetStore implements OffsetStore {

	private final DurableStateStore store;

	private final Map<ProjectionId, Long> revisions = new ConcurrentHashMap<>();

	/** Saves since the last confirmed one that failed in a way that may have applied (revision and offset). */
	private final Map<ProjectionId, List<Attempt>> unconfirmed = new ConcurrentHashMap<>();

	private record Attempt(long revision, TagOffset offset) {
	}

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
		return revision.thenCompose((current) -> attempt(id, current, offset));
	}

	private CompletionStage<Void> attempt(ProjectionId id, long current, TagOffset offset) {
		return this.store.upsert(key(id), current + 1, offset).handle((ok, error) -> {
			if (error == null) {
				this.revisions.put(id, current + 1);
				this.unconfirmed.remove(id);
				return CompletableFuture.<Void>completedFuture(null);
			}
			Throwable cause = Errors.unwrap(error);
			List<Attempt> earlier = this.unconfirmed.getOrDefault(id, List.of());
			if (cause instanceof DurableStateConflictException && !earlier.isEmpty()) {
				return adoptIfOurs(id, earlier, offset, cause);
			}
			if (!(cause instanceof DurableStateConflictException)) {
				// A timeout may have applied: a later conflict checks whether the row holds this save.
				this.unconfirmed.merge(id, List.of(new Attempt(current + 1, offset)), (a, b) -> {
					List<Attempt> both = new ArrayList<>(a);
					both.addAll(b);
					return List.copyOf(both.subList(Math.max(0, both.size() - 8), both.size()));
				});
			}
			return CompletableFuture.<Void>failedFuture(cause);
		}).thenCompose((stage) -> stage);
	}

	/** If the row holds one of the saves whose outcome was unknown, move to its revision and save again. */
	private CompletionStage<Void> adoptIfOurs(ProjectionId id, List<Attempt> earlier, TagOffset offset,
			Throwable conflict) {
		return this.store.get(key(id), TagOffset.class).thenCompose((state) -> {
			if (state.isPresent()
					&& earlier.contains(new Attempt(state.get().revision(), state.get().value()))) {
				this.revisions.put(id, state.get().revision());
				this.unconfirmed.remove(id);
				return attempt(id, state.get().revision(), offset);
			}
			return CompletableFuture.<Void>failedFuture(conflict);
		});
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
