package io.cassandrajournal.projection;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.query.TagOffset;

/**
 * The cursors of one lease term: every write carries the term's epoch. Where this fits: the engine gives a
 * segment's runner this view of the {@link DurableStateOffsetStore} while it holds the segment's lease.
 */
final class FencedCursor implements OffsetStore {

	private final DurableStateOffsetStore store;

	private final long epoch;

	FencedCursor(DurableStateOffsetStore store, long epoch) {
		this.store = store;
		this.epoch = epoch;
	}

	@Override
	public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
		return this.store.fence(id, TagOffset.START, this.epoch).thenApply(Optional::of);
	}

	@Override
	public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
		return this.store.save(id, offset, this.epoch);
	}

	/** A reset under a lease: a compare-and-set write of the start offset under the epoch, never a delete. */
	@Override
	public CompletionStage<Void> delete(ProjectionId id) {
		return this.store.save(id, TagOffset.START, this.epoch);
	}

}
