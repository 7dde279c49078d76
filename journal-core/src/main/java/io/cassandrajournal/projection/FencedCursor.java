package io.cassandrajournal.projection;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.state.DurableStateConflictException;

/**
 * The cursors of one lease term: every write carries the term's epoch, none is attempted once the term is no
 * longer valid, and a write refused because another owner fenced the cursor ends the term at once (so the
 * runner handles nothing more). Loading is fencing. Every write also stores the segment key of the term's lease row,
 * since a shared fan-out's entity cursor outlives a change in the number of segments and so is fenced under the
 * epochs of several rows ({@link DurableStateOffsetStore#fence(ProjectionId, TagOffset, long, String)}). Where this fits: the engine gives a segment's runner this
 * view of the {@link DurableStateOffsetStore} while it holds the segment's lease.
 */
final class FencedCursor implements OffsetStore {

	private final DurableStateOffsetStore store;

	private final LeaseTerm term;

	/**
	 * The cursors this term has fenced. The store's own knowledge of a cursor (its cached revision) outlives terms,
	 * so it cannot tell whether this term fenced it: a reset under a later term that trusted it wrote on an earlier
	 * term's revision without a fence, and another owner's writes in between made that a conflict ending the term.
	 */
	private final Set<ProjectionId> fencedHere = ConcurrentHashMap.newKeySet();

	FencedCursor(DurableStateOffsetStore store, LeaseTerm term) {
		this.store = store;
		this.term = term;
	}

	@Override
	public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
		if (!this.term.valid()) {
			return CompletableFuture.failedFuture(lapsed(id));
		}
		return fenced(this.store.fence(id, TagOffset.START, this.term.epoch(), this.term.lease().segment()))
			.thenApply((offset) -> {
				this.fencedHere.add(id);
				return Optional.of(offset);
			});
	}

	@Override
	public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
		if (!this.term.valid()) {
			return CompletableFuture.failedFuture(lapsed(id));
		}
		return fenced(this.store.save(id, offset, this.term.epoch(), this.term.lease().segment()));
	}

	/**
	 * A reset under a lease: a compare-and-set write of the start offset under the epoch, never a delete. A cursor
	 * this term has not fenced yet (a reset that reached an entity's runner before its start did) is fenced first:
	 * a save without a fence is refused, and that refusal used to end the whole segment's term, failing the resets
	 * of all its other entities with it (docs/reliability.md, finding 29). Whether this term fenced it is this
	 * view's own record, not the store's cache, which an earlier term may have filled.
	 */
	@Override
	public CompletionStage<Void> delete(ProjectionId id) {
		if (this.fencedHere.contains(id)) {
			return save(id, TagOffset.START);
		}
		return load(id).thenCompose((ignored) -> save(id, TagOffset.START));
	}

	private CursorFencedException lapsed(ProjectionId id) {
		return new CursorFencedException("the lease of " + id + " (epoch " + this.term.epoch()
				+ ") lapsed or was lost: this instance no longer writes its cursor");
	}

	private <T> CompletionStage<T> fenced(CompletionStage<T> write) {
		return write.whenComplete((ok, error) -> {
			Throwable cause = (error != null) ? Errors.unwrap(error) : null;
			if (cause instanceof CursorFencedException || cause instanceof DurableStateConflictException) {
				this.term.lose();
			}
		});
	}

}
