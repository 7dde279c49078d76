package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;

/**
 * The renewals of the leases one shared projection holds here, for its {@link SegmentOwnership}: on the renewal
 * thread, every renewal interval, each lease held is renewed on its own; the renewals are sent together and none
 * waits for another, at most one per segment is in flight, and each is bounded by the term's validity. A refused,
 * failed or timed-out renewal, or a term that lapsed, is handed to the {@link Loss} (which ends the term at once).
 * Logs under {@link SegmentOwnership}'s logger, as the ownership it was part of did.
 */
final class LeaseRenewals {

	private static final Logger logger = LoggerFactory.getLogger(SegmentOwnership.class);

	/** Told of a term that ended (from any thread). */
	@FunctionalInterface
	interface Loss {

		void lose(SegmentedProjection.Segment segment, LeaseTerm term, String why);

	}

	private final String projection;

	private final List<SegmentedProjection.Segment> segments;

	private final SegmentOwnership.Context context;

	/** How long a term stays valid after the start of its last successful renewal. */
	private final Duration validFor;

	private final Loss loss;

	/** The terms whose renewal is in flight (touched by the renewal thread and the driver's threads). */
	private final Set<LeaseTerm> renewing = ConcurrentHashMap.newKeySet();

	LeaseRenewals(String projection, List<SegmentedProjection.Segment> segments, SegmentOwnership.Context context,
			Duration validFor, Loss loss) {
		this.projection = projection;
		this.segments = segments;
		this.context = context;
		this.validFor = validFor;
		this.loss = loss;
	}

	/**
	 * On the renewal thread: sends the renewal of every lease held that has none in flight, without waiting for
	 * any; drops (on the lease thread) a segment whose term lapsed.
	 */
	void renewAll() {
		try {
			// Also while stopping (no longer active): the segments still held are being handed over.
			if (this.context.frozen().get()) {
				return;
			}
			for (SegmentedProjection.Segment segment : this.segments) {
				LeaseTerm term = segment.term;
				if (term != null) {
					renew(segment, term);
				}
			}
		}
		catch (Throwable ex) {
			// Anything, an Error too: a throw would end this loop for good (scheduleWithFixedDelay runs it no more),
			// and the segments held would lapse while this instance still beats (finding 32).
			logger.warn("Projection {}: renewing its leases failed; trying again", this.projection, ex);
		}
	}

	private void renew(SegmentedProjection.Segment segment, LeaseTerm term) {
		if (!term.valid()) {
			this.loss.lose(segment, term, "its lease lapsed or a cursor write was fenced");
			return;
		}
		if (!this.renewing.add(term)) {
			return;
		}
		long started = this.context.nanoClock().getAsLong();
		CompletableFuture<Optional<Lease>> renewal;
		try {
			renewal = this.context.leases().renew(term.lease()).toCompletableFuture();
		}
		catch (Throwable ex) {
			// An Error too: thrown past here it left the term marked as renewing, so it was never renewed again.
			renewal = CompletableFuture.failedFuture(ex);
		}
		// Bound: past the term's validity a renewal's answer is of no use, so it cannot hold the segment.
		renewal.orTimeout(this.validFor.toMillis(), TimeUnit.MILLISECONDS).whenComplete((renewed, error) -> {
			this.renewing.remove(term);
			if (error == null && renewed.isPresent()) {
				term.renewed(renewed.get(), started);
			}
			else if (error == null) {
				this.loss.lose(segment, term, "another instance took its lease");
			}
			else {
				Throwable cause = Errors.unwrap(error);
				this.loss.lose(segment, term, (cause instanceof TimeoutException)
						? "renewing its lease took longer than the term (" + this.validFor.toMillis() + " ms)"
						: "renewing its lease failed: " + cause);
			}
		});
	}

}
