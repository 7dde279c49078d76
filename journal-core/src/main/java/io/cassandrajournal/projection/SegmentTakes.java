package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.query.TagOffset;

/**
 * How a {@link SegmentOwnership} takes a segment, on its lease thread only: the lease is acquired when its
 * {@link LeaseWatch} allows, the segment's cursor is fenced under the new epoch (bounded by what is left of the
 * term), then its runner starts. A take whose fence fails or outlasts the term, or whose runner cannot start,
 * releases the segment, which is taken again after a wait that doubles from the renewal interval up to the lease
 * timeout while its takes keep failing ({@link FailedTakes}). Logs under {@link SegmentOwnership}'s logger, as the
 * ownership it was part of did.
 */
final class SegmentTakes {

	private static final Logger logger = LoggerFactory.getLogger(SegmentOwnership.class);

	private final String projection;

	private final SegmentOwnership.Context context;

	private final SegmentOwnership.Starter starter;

	/** Where a segment whose cursor is absent starts; {@code null} for segments without a cursor of their own. */
	private final @Nullable BiFunction<SegmentedProjection.Segment, DurableStateOffsetStore, CompletionStage<TagOffset>> initial;

	private final String self;

	private final Duration timeout;

	/** How long a term stays valid after the start of its last successful renewal. */
	private final Duration validFor;

	/** The ownership's lease watches (shared with {@link SegmentHandOvers}). */
	private final Map<SegmentedProjection.Segment, LeaseWatch> watches;

	private final SegmentHandOvers handOvers;

	/** The segments whose latest takes could not start them, until one does. */
	private final Map<SegmentedProjection.Segment, FailedTakes> failedTakes = new HashMap<>();

	SegmentTakes(String projection, SegmentOwnership.Context context, SegmentOwnership.Starter starter,
			@Nullable BiFunction<SegmentedProjection.Segment, DurableStateOffsetStore, CompletionStage<TagOffset>> initial,
			Duration validFor, Map<SegmentedProjection.Segment, LeaseWatch> watches, SegmentHandOvers handOvers) {
		this.projection = projection;
		this.context = context;
		this.starter = starter;
		this.initial = initial;
		this.self = context.settings().instanceId();
		this.timeout = context.settings().leaseTimeout();
		this.validFor = validFor;
		this.watches = watches;
		this.handOvers = handOvers;
	}

	/** Forgets every streak of failed takes (a new start of the ownership). */
	void clear() {
		this.failedTakes.clear();
	}

	/**
	 * A streak ends when the segment goes to another instance: if it comes back, its first failure is a WARN again
	 * and waits from the start.
	 */
	void notMine(SegmentedProjection.Segment segment) {
		this.failedTakes.remove(segment);
	}

	void tryTake(SegmentedProjection.Segment segment, Optional<Lease> row) {
		FailedTakes failed = this.failedTakes.get(segment);
		if (failed != null && !failed.mayTryAgain(this.context.nanoClock().getAsLong())) {
			return;
		}
		String key = segment.range.key();
		LeaseWatch watch = this.watches.computeIfAbsent(segment, (s) -> new LeaseWatch(this.timeout));
		if (!watch.mayTake(row, this.context.nanoClock().getAsLong())) {
			return;
		}
		long started = this.context.nanoClock().getAsLong();
		Optional<Lease> taken = SegmentOwnership.join(this.context.leases().acquire(this.projection, key, this.self, row));
		if (taken.isEmpty()) {
			return;
		}
		this.watches.remove(segment);
		LeaseTerm term = new LeaseTerm(taken.get(), started, this.validFor, this.context.nanoClock());
		try {
			fence(segment, term);
		}
		catch (Exception | Error ex) {
			// An Error too: thrown past here it left the lease held with no term, neither renewed nor run, until its
			// silence reached the lease timeout and this instance took its own row over (finding 32).
			term.lose();
			takeFailed(segment, term, "could not fence its cursor", ex);
			return;
		}
		segment.term = term;
		try {
			this.starter.run(segment, term::valid, new FencedCursor(this.context.offsets(), term));
		}
		catch (Exception | Error ex) {
			// Not held without a running owner: the round only takes segments without a term, so a segment left
			// with this one would be renewed, never run, until the instance stops. Released, it is taken again.
			SegmentRunner runner = segment.runner;
			this.handOvers.vacate(segment, term);
			if (runner != null) {
				runner.retire();
			}
			takeFailed(segment, term, "could not start its runner", ex);
			return;
		}
		FailedTakes streak = this.failedTakes.remove(segment);
		if (streak == null) {
			logger.info("Projection {}: runs segment {} (epoch {})", this.projection, key, term.epoch());
		}
		else {
			logger.info("Projection {}: runs segment {} (epoch {}) after {} failed takes", this.projection, key,
					term.epoch(), streak.count());
		}
	}

	/**
	 * Fences a segment's cursor under the term just taken, when the segment has a cursor of its own. The wait is
	 * bounded by what is left of the term ({@link LeaseTerm#remainingNanos()}): a fence that answers later would
	 * start the runner under a lapsed term
	 * (finding 32), and it would block the lease thread meanwhile.
	 */
	private void fence(SegmentedProjection.Segment segment, LeaseTerm term) {
		BiFunction<SegmentedProjection.Segment, DurableStateOffsetStore, CompletionStage<TagOffset>> from = this.initial;
		if (from == null) {
			return;
		}
		DurableStateOffsetStore offsets = this.context.offsets();
		long bound = Math.max(0, term.remainingNanos());
		try {
			SegmentOwnership.join(offsets.fence(segment.id, () -> from.apply(segment, offsets), term.epoch())
				.toCompletableFuture()
				.orTimeout(bound, TimeUnit.NANOSECONDS));
		}
		catch (CompletionException ex) {
			if (Errors.unwrap(ex) instanceof TimeoutException timeout) {
				throw new IllegalStateException(fenceTooLong(bound), timeout);
			}
			throw ex;
		}
		if (!term.valid()) {
			throw new IllegalStateException(fenceTooLong(bound));
		}
	}

	/** @return why a fence bounded by {@code boundNanos} (what was left of the term at its send) did not count */
	private String fenceTooLong(long boundNanos) {
		return "fencing took longer than what was left of the term (" + TimeUnit.NANOSECONDS.toMillis(boundNanos)
				+ " of its " + this.validFor.toMillis() + " ms)";
	}

	/**
	 * A take that could not start its segment: releases the lease and waits before the segment is taken again, the
	 * wait doubling from the renewal interval up to the lease timeout while the takes keep failing, so that a
	 * runner that cannot start does not churn a take and a release (two Paxos rounds) at every round (finding 32).
	 * The first failure of a streak is a WARN, the later ones DEBUG; the take that ends it says so (INFO).
	 * A fatal Error is thrown on once the lease was released.
	 */
	private void takeFailed(SegmentedProjection.Segment segment, LeaseTerm term, String what, Throwable ex) {
		try {
			this.context.leases().release(term.lease()).whenComplete((released, failure) -> {
				if (failure != null) {
					logger.warn("Projection {}: releasing segment {} (epoch {}) after a failed take failed; its row "
							+ "lapses after the lease timeout", this.projection, segment.range.key(), term.epoch(),
							Errors.unwrap(failure));
				}
			});
		}
		catch (Exception | Error releaseFailed) {
			// Sent by the session on this thread, and it threw: the row lapses after the lease timeout.
			ex.addSuppressed(releaseFailed);
		}
		FailedTakes failed = this.failedTakes.computeIfAbsent(segment,
				(s) -> new FailedTakes(this.context.settings().renewInterval(), this.timeout));
		Duration wait = failed.failed(this.context.nanoClock().getAsLong());
		if (failed.count() == 1) {
			logger.warn("Projection {}: took segment {} (epoch {}) but {}; released it. Taking it again in {} ms, "
					+ "then after waits doubling up to the lease timeout while it keeps failing (logged at DEBUG)",
					this.projection, segment.range.key(), term.epoch(), what, wait.toMillis(), ex);
		}
		else {
			logger.debug("Projection {}: took segment {} (epoch {}) but {} ({} failed takes); released it, taking it "
					+ "again in {} ms", this.projection, segment.range.key(), term.epoch(), what, failed.count(),
					wait.toMillis(), ex);
		}
		if (ex instanceof Error error && Errors.fatal(error)) {
			throw error;
		}
	}

}
