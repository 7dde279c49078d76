package io.cassandrajournal.projection;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a {@link SegmentOwnership} gives a segment up, on its lease thread only: a hand-over (the runner retired
 * after the batch in hand, its cursor stored, then the lease released so the winner takes it at once), a drop (a
 * term that ended: the runner retired at once, nothing more handled or saved under the term), and what both do to
 * the segment ({@link #vacate}). A retired runner is never started again, not even by a reset that reaches it after
 * the hand-over (docs/reliability.md, finding 29, item 9). Logs under {@link SegmentOwnership}'s logger, as the
 * ownership it was part of did.
 */
final class SegmentHandOvers {

	private static final Logger logger = LoggerFactory.getLogger(SegmentOwnership.class);

	private final String projection;

	private final SegmentOwnership.Context context;

	/** The ownership's lease watches (shared with {@link SegmentTakes}; lease thread only). */
	private final Map<SegmentedProjection.Segment, LeaseWatch> watches;

	private final Map<SegmentedProjection.Segment, CompletableFuture<Void>> handingOver = new HashMap<>();

	SegmentHandOvers(String projection, SegmentOwnership.Context context,
			Map<SegmentedProjection.Segment, LeaseWatch> watches) {
		this.projection = projection;
		this.context = context;
		this.watches = watches;
	}

	/** @return whether a hand-over of the segment is under way */
	boolean handingOver(SegmentedProjection.Segment segment) {
		return this.handingOver.containsKey(segment);
	}

	/** Stops a segment at once: nothing more is handled or saved under the term. */
	void drop(SegmentedProjection.Segment segment, LeaseTerm term, String why) {
		SegmentRunner runner = segment.runner;
		CompletableFuture<Void> handOver = vacate(segment, term);
		if (runner != null) {
			runner.retire();
		}
		if (handOver != null) {
			handOver.complete(null);
		}
		logger.warn("Projection {}: stopped segment {} (epoch {}): {}", this.projection, segment.range.key(),
				term.epoch(), why);
	}

	/**
	 * Ends a term and clears its segment (no term, no runner, no watch, no hand-over), on the lease thread: what
	 * losing a segment ({@link #drop}) and releasing it ({@link #release}) both do.
	 * @return the hand-over under way, if any, for the caller to complete once the runner was told to stop
	 */
	@Nullable CompletableFuture<Void> vacate(SegmentedProjection.Segment segment, LeaseTerm term) {
		term.lose();
		segment.term = null;
		segment.runner = null;
		this.watches.remove(segment);
		return this.handingOver.remove(segment);
	}

	/**
	 * Stops the segment's runner after the batch in hand (its cursor stored), then releases the lease.
	 * @return completes once released
	 */
	CompletableFuture<Void> handOver(SegmentedProjection.Segment segment) {
		CompletableFuture<Void> existing = this.handingOver.get(segment);
		if (existing != null) {
			return existing;
		}
		CompletableFuture<Void> done = new CompletableFuture<>();
		this.handingOver.put(segment, done);
		LeaseTerm term = segment.term;
		SegmentRunner runner = segment.runner;
		CompletionStage<Void> stopped = (runner != null) ? runner.retire() : CompletableFuture.completedFuture(null);
		stopped.whenComplete((ok, error) -> this.context.thread().execute(() -> release(segment, term, done)));
		return done;
	}

	private void release(SegmentedProjection.Segment segment, @Nullable LeaseTerm term, CompletableFuture<Void> done) {
		try {
			if (term == null || segment.term != term) {
				return;
			}
			vacate(segment, term);
			try {
				SegmentOwnership.join(this.context.leases().release(term.lease()));
				logger.info("Projection {}: handed segment {} over (epoch {})", this.projection, segment.range.key(),
						term.epoch());
			}
			catch (RuntimeException ex) {
				logger.warn("Projection {}: releasing segment {} failed (it is taken over after the lease timeout)",
						this.projection, segment.range.key(), ex);
			}
		}
		finally {
			done.complete(null);
		}
	}

}
