package io.cassandrajournal.projection;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import com.fasterxml.jackson.annotation.JsonInclude;
import org.jspecify.annotations.Nullable;

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
 * value is another writer's, and the conflict stands. {@link #load} keeps such remembered saves only while the
 * stored revision is still the one they were sent on (one of them may land after the reload's plain read, which
 * cannot see a proposal that too few replicas accepted); a reload that finds the row moved by another write
 * forgets them, as they can no longer land.
 * <p>
 * <b>Projections shared by leases</b> (package-private API used by the engine): the stored JSON is the offset's
 * three fields plus {@code "epoch"}, the lease epoch of the owner that wrote it; a cursor without it (written by a
 * single instance, an older version, or the TypeScript implementation) reads as epoch 0, and readers that do not
 * know the property ignore it (our serializer ignores unknown properties; {@code JSON.parse} keeps it as an
 * extra field). A shared fan-out's entity cursors also store {@code "lease"}, the segment key of the lease row
 * the epoch belongs to: after a change in the number of segments an entity's cursor is fenced under another row,
 * whose epochs start again at 1. A new owner starts only through {@link #fence}, which refuses when the stored
 * epoch is above its own (of the same lease row, when both are known); a save under an epoch needs a fence first (no adopting whatever revision is stored), and a reset is a
 * compare-and-set write of the start offset ({@link FencedCursor}), never a delete.
 */
public final class DurableStateOffsetStore implements OffsetStore {

	private final DurableStateStore store;

	private static final int UNKNOWN_OUTCOMES_KEPT = 64;

	private final Map<ProjectionId, Long> revisions = new ConcurrentHashMap<>();

	/** Cursors whose save at the cached revision + 1 failed without a conflict, so may have been applied. */
	private final Map<ProjectionId, Set<Cursor>> unknownOutcomes = new ConcurrentHashMap<>();

	/** @param store the durable state store */
	public DurableStateOffsetStore(DurableStateStore store) {
		this.store = store;
	}

	static String key(ProjectionId id) {
		return "projection-offset|" + id.name() + "|" + id.key();
	}

	/**
	 * A stored cursor: the offset, the lease epoch it was written under (0 when written without a lease) and the
	 * segment key of the lease row that epoch belongs to ({@code null} without a lease, or when written by a version
	 * that did not store it).
	 */
	record Cursor(TagOffset offset, long epoch, @Nullable String lease) {

		Cursor(TagOffset offset, long epoch) {
			this(offset, epoch, null);
		}

		/** @return what is written: the plain offset without an epoch (today's format), else with it */
		Object payload() {
			return (this.epoch == 0) ? this.offset
					: new StoredCursor(this.offset.timestamp(), this.offset.persistenceId(), this.offset.sequenceNr(),
							this.epoch, this.lease);
		}

		/**
		 * @param epoch a new owner's epoch
		 * @param lease the segment key of that owner's lease row
		 * @return whether this cursor was written by a newer owner of the same lease row. Epochs of different rows
		 * (a shared fan-out's entity after a change in the number of segments) are not comparable: only the
		 * revision compare-and-set orders such writers. A cursor without a row key (an older version's) is taken as
		 * written under the same row.
		 */
		boolean newerThan(long epoch, @Nullable String lease) {
			return this.epoch > epoch && (this.lease == null || lease == null || this.lease.equals(lease));
		}

	}

	/**
	 * The JSON of a cursor row: {@link TagOffset}'s fields, plus the epoch and the lease row's segment key when
	 * written under a lease ({@code "lease"} is an extra property, left out when there is none, so a by-tag
	 * segment's cursor is exactly the JSON written before the property existed; readers that do not know it ignore
	 * it).
	 */
	record StoredCursor(long timestamp, String persistenceId, long sequenceNr, @Nullable Long epoch,
			@JsonInclude(JsonInclude.Include.NON_NULL) @Nullable String lease) {

		Cursor cursor() {
			return new Cursor(new TagOffset(this.timestamp, this.persistenceId, this.sequenceNr),
					(this.epoch != null) ? this.epoch : 0L, this.lease);
		}

	}

	private CompletionStage<Optional<DurableState<Cursor>>> read(ProjectionId id) {
		return this.store.get(key(id), StoredCursor.class)
			.thenApply((state) -> state.map((s) -> new DurableState<>(s.persistenceId(), s.revision(), s.updatedAt(),
					s.value().cursor())));
	}

	/**
	 * Reads a stored cursor for a status view, without touching what this store tracks for its own saves
	 * ({@link #load} does).
	 * @param id a projection or segment
	 * @return its stored offset, if any
	 */
	CompletionStage<Optional<TagOffset>> peek(ProjectionId id) {
		return read(id).thenApply((state) -> state.map((s) -> s.value().offset()));
	}

	/**
	 * Reads a stored cursor for a status view or an inherited cursor from any offset store: peeked from a durable
	 * one ({@link #peek}; a load raises the revision it tracks for its saves and may forget the saves whose outcome is
	 * unknown, which a runner of the same cursor settles its conflicts with), loaded from any other (which tracks
	 * nothing).
	 * @param store an offset store
	 * @param id a projection or segment
	 * @return its stored offset, if any
	 */
	static CompletionStage<Optional<TagOffset>> peekOrLoad(OffsetStore store, ProjectionId id) {
		return (store instanceof DurableStateOffsetStore durable) ? durable.peek(id) : store.load(id);
	}

	@Override
	public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
		return read(id).thenApply((state) -> {
			long stored = state.map(DurableState::revision).orElse(0L);
			Long cached = this.revisions.get(id);
			// The saves whose outcome is unknown were all sent on the cached revision (a save that succeeds
			// forgets them). While the row still has that revision one of them may yet land on it, one past (a
			// proposal accepted by too few replicas for this plain read to see, completed by the next round), and
			// must still be recognised; once another write moved the row they can no longer land.
			if (cached == null || stored != cached) {
				this.unknownOutcomes.remove(id);
			}
			raise(id, stored);
			return state.map((s) -> s.value().offset());
		});
	}

	@Override
	public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
		return save(id, new Cursor(offset, 0), true);
	}

	/**
	 * Saves a cursor under a lease: a compare-and-set on the revision this instance fenced or last wrote, so it
	 * fails (with a conflict, or {@link CursorFencedException} when never fenced) once another owner fenced it.
	 * @param id the segment's cursor
	 * @param offset the offset
	 * @param epoch the lease epoch of this owner, at least 1
	 * @return completes when stored
	 */
	CompletionStage<Void> save(ProjectionId id, TagOffset offset, long epoch) {
		return save(id, offset, epoch, null);
	}

	/**
	 * Like {@link #save(ProjectionId, TagOffset, long)}, storing the segment key of the lease row the epoch belongs to.
	 * @param id the cursor
	 * @param offset the offset
	 * @param epoch the lease epoch of this owner, at least 1
	 * @param lease the segment key of the lease row ({@code null}: not stored)
	 * @return completes when stored
	 */
	CompletionStage<Void> save(ProjectionId id, TagOffset offset, long epoch, @Nullable String lease) {
		if (!this.revisions.containsKey(id)) {
			return CompletableFuture.failedFuture(new CursorFencedException("cursor " + id + " is shared by leases: "
					+ "an owner saves it only after fencing it under its epoch (" + epoch + ")"));
		}
		return save(id, new Cursor(offset, epoch, lease), true);
	}

	private CompletionStage<Void> save(ProjectionId id, Cursor cursor, boolean mayResolve) {
		CompletionStage<Long> revision = this.revisions.containsKey(id)
				? CompletableFuture.completedFuture(this.revisions.get(id))
				: load(id).thenApply((ignored) -> this.revisions.get(id));
		return revision.thenCompose((current) -> this.store.upsert(key(id), current + 1, cursor.payload())
			.handle((ok, error) -> {
				if (error == null) {
					raise(id, current + 1);
					this.unknownOutcomes.remove(id);
					return CompletableFuture.<Void>completedFuture(null);
				}
				Throwable cause = Errors.unwrap(error);
				if (!(cause instanceof DurableStateConflictException conflict)) {
					remember(id, cursor);
					return CompletableFuture.<Void>failedFuture(cause);
				}
				Set<Cursor> mine = this.unknownOutcomes.get(id);
				if (!mayResolve || mine == null || conflict.actualRevision() != current + 1) {
					return CompletableFuture.<Void>failedFuture(cause);
				}
				// What it remembers is dropped only once the read settles it: a read that fails leaves it for the
				// next save (else every later save conflicts, and the projection never moves again).
				return read(id).thenCompose((stored) -> {
					this.unknownOutcomes.remove(id);
					// The stored cursor carries its writer's epoch: another owner's cursor never equals one of ours.
					if (stored.isPresent() && stored.get().revision() == current + 1
							&& mine.contains(stored.get().value())) {
						raise(id, current + 1);
						return save(id, cursor, false);
					}
					return CompletableFuture.<Void>failedFuture(cause);
				});
			})
			.thenCompose((stage) -> stage));
	}

	/**
	 * Fences a cursor for an instance that has just taken over its segment's lease: reads the stored cursor
	 * and, unless it was written under a higher epoch (then a newer owner holds the segment: refused with
	 * {@link CursorFencedException}), writes it back twice under this epoch, each a compare-and-set on the
	 * revision, so that the revision is at least two past anything the previous owner may hold. The previous
	 * owner's next save then conflicts, whatever it remembers: a save whose outcome it never learned is only
	 * settled as its own when the stored revision is exactly one past its cached one (see the class comment),
	 * which a double bump rules out. Retries while the previous owner's last saves are still landing (a conflict
	 * between read and write); the epoch check is repeated on every read, and the compare-and-set makes it hold
	 * for the write.
	 * @param id the segment's cursor
	 * @param initial the cursor to start from when none is stored (it is written, so a previous owner cannot
	 * create the row either)
	 * @param epoch the lease epoch just taken, at least 1
	 * @return the cursor to resume from
	 */
	CompletionStage<TagOffset> fence(ProjectionId id, TagOffset initial, long epoch) {
		return fence(id, initial, epoch, null);
	}

	/**
	 * Like {@link #fence(ProjectionId, TagOffset, long)}, for a cursor that may be fenced under the epochs of
	 * several lease rows (a shared fan-out's entity, whose segment changes with the number of segments): refused
	 * only when written under a higher epoch of the same row; a cursor written under another row is taken over by
	 * the double compare-and-set alone, which makes that writer's next save conflict.
	 * @param id the cursor
	 * @param initial the cursor to start from when none is stored
	 * @param epoch the lease epoch just taken, at least 1
	 * @param lease the segment key of the lease row just taken
	 * @return the cursor to resume from
	 */
	CompletionStage<TagOffset> fence(ProjectionId id, TagOffset initial, long epoch, @Nullable String lease) {
		return fence(id, () -> CompletableFuture.completedFuture(initial), epoch, lease, FENCE_ATTEMPTS);
	}

	/**
	 * Like {@link #fence(ProjectionId, TagOffset, long)}, with the cursor to start from computed only when none is
	 * stored (a segment of a new number of segments inherits the cursors of the previous one, which costs reads).
	 * @param id the segment's cursor
	 * @param initial computes the cursor to start from when none is stored
	 * @param epoch the lease epoch just taken, at least 1
	 * @return the cursor to resume from
	 */
	CompletionStage<TagOffset> fence(ProjectionId id, Supplier<CompletionStage<TagOffset>> initial, long epoch) {
		return fence(id, initial, epoch, null, FENCE_ATTEMPTS);
	}

	private static final int FENCE_ATTEMPTS = 5;

	private CompletionStage<TagOffset> fence(ProjectionId id, Supplier<CompletionStage<TagOffset>> initial, long epoch,
			@Nullable String lease, int attemptsLeft) {
		return read(id).thenCompose((stored) -> {
			if (stored.isPresent() && stored.get().value().newerThan(epoch, lease)) {
				return CompletableFuture.<TagOffset>failedFuture(new CursorFencedException("cursor " + id
						+ " was written under lease epoch " + stored.get().value().epoch() + ", above this owner's "
						+ epoch + ": another instance owns the segment"));
			}
			CompletionStage<TagOffset> from = stored.isPresent()
					? CompletableFuture.completedFuture(stored.get().value().offset()) : initial.get();
			return from.thenCompose((offset) -> fenceWrite(id, stored, new Cursor(offset, epoch, lease), initial,
					epoch, lease, attemptsLeft));
		});
	}

	private CompletionStage<TagOffset> fenceWrite(ProjectionId id, Optional<DurableState<Cursor>> stored,
			Cursor cursor, Supplier<CompletionStage<TagOffset>> initial, long epoch, @Nullable String lease,
			int attemptsLeft) {
		long revision = stored.map(DurableState::revision).orElse(0L);
		return this.store.upsert(key(id), revision + 1, cursor.payload())
			.thenCompose((ignored) -> this.store.upsert(key(id), revision + 2, cursor.payload()))
			.handle((ok, error) -> {
				if (error == null) {
					raise(id, revision + 2);
					this.unknownOutcomes.remove(id);
					return CompletableFuture.completedFuture(cursor.offset());
				}
				Throwable cause = Errors.unwrap(error);
				if (cause instanceof DurableStateConflictException && attemptsLeft > 1) {
					return fence(id, initial, epoch, lease, attemptsLeft - 1);
				}
				return CompletableFuture.<TagOffset>failedFuture(cause);
			})
			.thenCompose((stage) -> stage);
	}

	/**
	 * Moves the cached revision of a cursor up, never down: a read that was sent before one of this instance's
	 * saves landed answers with an older revision, and taking it would turn the next save into a conflict (or,
	 * settled as an unknown outcome, into a write on a revision it never read). Only {@link #delete} drops what is cached;
	 * a revision cached under an earlier lease term is overtaken by the next term's fence, which reads the stored
	 * revision and writes two past it.
	 */
	private void raise(ProjectionId id, long revision) {
		this.revisions.merge(id, revision, Math::max);
	}

	private void remember(ProjectionId id, Cursor cursor) {
		this.unknownOutcomes.compute(id, (key, cursors) -> {
			Set<Cursor> kept = (cursors != null) ? cursors : new LinkedHashSet<>();
			kept.add(cursor);
			if (kept.size() > UNKNOWN_OUTCOMES_KEPT) {
				kept.remove(kept.iterator().next());
			}
			return kept;
		});
	}

	@Override
	public CompletionStage<Void> delete(ProjectionId id) {
		return this.store.get(key(id), StoredCursor.class).thenCompose((state) -> {
			this.revisions.remove(id);
			this.unknownOutcomes.remove(id);
			return state.isPresent() ? this.store.delete(key(id), state.get().revision())
					: CompletableFuture.<Void>completedFuture(null);
		});
	}

}
