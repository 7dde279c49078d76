package io.cassandrajournal.projection;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
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
 * A save whose outcome stayed unknown (it failed with anything but a conflict, for example a timeout while
 * Cassandra went away) may have been applied. If the next save then conflicts because the stored revision is
 * exactly the one that save would have written, the stored value is read: when it is an offset this instance
 * tried to save, the write was ours, the cached revision moves on and the save is retried once. Any other
 * value is another writer's, and the conflict stands.
 */
public final class DurableStateOffsetStore implements OffsetStore {

	private final DurableStateStore store;

	private static final int UNKNOWN_OUTCOMES_KEPT = 64;

	private final Map<ProjectionId, Long> revisions = new ConcurrentHashMap<>();

	/** Offsets whose save at the cached revision + 1 failed without a conflict, so may have been applied. */
	private final Map<ProjectionId, Set<TagOffset>> unknownOutcomes = new ConcurrentHashMap<>();

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
		return save(id, offset, true);
	}

	private CompletionStage<Void> save(ProjectionId id, TagOffset offset, boolean mayResolve) {
		CompletionStage<Long> revision = this.revisions.containsKey(id)
				? CompletableFuture.completedFuture(this.revisions.get(id))
				: load(id).thenApply((ignored) -> this.revisions.get(id));
		return revision.thenCompose((current) -> this.store.upsert(key(id), current + 1, offset).handle((ok, error) -> {
			if (error == null) {
				this.revisions.put(id, current + 1);
				this.unknownOutcomes.remove(id);
				return CompletableFuture.<Void>completedFuture(null);
			}
			Throwable cause = Errors.unwrap(error);
			if (!(cause instanceof DurableStateConflictException conflict)) {
				remember(id, offset);
				return CompletableFuture.<Void>failedFuture(cause);
			}
			Set<TagOffset> mine = this.unknownOutcomes.remove(id);
			if (!mayResolve || mine == null || conflict.actualRevision() != current + 1) {
				return CompletableFuture.<Void>failedFuture(cause);
			}
			return this.store.get(key(id), TagOffset.class).thenCompose((stored) -> {
				if (stored.isPresent() && stored.get().revision() == current + 1 && mine.contains(stored.get().value())) {
					this.revisions.put(id, current + 1);
					return save(id, offset, false);
				}
				return CompletableFuture.<Void>failedFuture(cause);
			});
		}).thenCompose((stage) -> stage));
	}

	/**
	 * Fences a cursor for an instance that has just taken over its segment's lease: reads the stored cursor
	 * and writes it back twice, each a compare-and-set on the revision, so that the revision is at least two
	 * past anything the previous owner may hold. The previous owner's next save then conflicts, whatever it
	 * remembers: a save whose outcome it never learned is only settled as its own when the stored revision is
	 * exactly one past its cached one (see the class comment), which a double bump rules out. Retries while
	 * the previous owner's last saves are still landing (a conflict between read and write).
	 * @param id the segment's cursor
	 * @param initial the cursor to start from when none is stored (it is written, so a previous owner cannot
	 * create the row either)
	 * @return the cursor to resume from
	 */
	CompletionStage<TagOffset> fence(ProjectionId id, TagOffset initial) {
		return fence(id, initial, FENCE_ATTEMPTS);
	}

	private static final int FENCE_ATTEMPTS = 5;

	private CompletionStage<TagOffset> fence(ProjectionId id, TagOffset initial, int attemptsLeft) {
		return this.store.get(key(id), TagOffset.class).thenCompose((stored) -> {
			long revision = stored.map(DurableState::revision).orElse(0L);
			TagOffset cursor = stored.map(DurableState::value).orElse(initial);
			return this.store.upsert(key(id), revision + 1, cursor)
				.thenCompose((ignored) -> this.store.upsert(key(id), revision + 2, cursor))
				.handle((ok, error) -> {
					if (error == null) {
						this.revisions.put(id, revision + 2);
						this.unknownOutcomes.remove(id);
						return CompletableFuture.completedFuture(cursor);
					}
					Throwable cause = Errors.unwrap(error);
					if (cause instanceof DurableStateConflictException && attemptsLeft > 1) {
						return fence(id, initial, attemptsLeft - 1);
					}
					return CompletableFuture.<TagOffset>failedFuture(cause);
				})
				.thenCompose((stage) -> stage);
		});
	}

	private void remember(ProjectionId id, TagOffset offset) {
		this.unknownOutcomes.compute(id, (key, offsets) -> {
			Set<TagOffset> kept = (offsets != null) ? offsets : new LinkedHashSet<>();
			kept.add(offset);
			if (kept.size() > UNKNOWN_OUTCOMES_KEPT) {
				kept.remove(kept.iterator().next());
			}
			return kept;
		});
	}

	@Override
	public CompletionStage<Void> delete(ProjectionId id) {
		return this.store.get(key(id), TagOffset.class).thenCompose((state) -> {
			this.revisions.remove(id);
			this.unknownOutcomes.remove(id);
			return state.isPresent() ? this.store.delete(key(id), state.get().revision())
					: CompletableFuture.<Void>completedFuture(null);
		});
	}

}
