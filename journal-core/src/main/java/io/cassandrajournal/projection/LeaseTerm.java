package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * One term of a segment's lease as its owner sees it: the lease row it last wrote, and until when it may act on
 * it. The owner may act until {@code timeout - margin} after the START of its last successful renewal (or take),
 * on its own monotonic clock; a contender takes the segment only after the beat that renewal wrote stayed
 * unchanged for the whole timeout on the contender's clock ({@link LeaseWatch}), so the owner stops first. A term
 * once lost (a renewal refused or failed, a fenced cursor write) never becomes valid again: a new take starts a
 * new term. Where this fits: the segment's runner asks {@link #valid()} before every event, batch and cursor save.
 */
final class LeaseTerm {

	private final LongSupplier nanoClock;

	private final long validForNanos;

	private volatile Lease lease;

	private volatile long validUntilNanos;

	private volatile boolean lost;

	/**
	 * @param lease the lease just taken
	 * @param startedNanos the owner's clock when the take was sent
	 * @param validFor the lease timeout minus the margin
	 * @param nanoClock the owner's monotonic clock
	 */
	LeaseTerm(Lease lease, long startedNanos, Duration validFor, LongSupplier nanoClock) {
		this.lease = lease;
		this.nanoClock = nanoClock;
		this.validForNanos = validFor.toNanos();
		this.validUntilNanos = startedNanos + this.validForNanos;
	}

	Lease lease() {
		return this.lease;
	}

	long epoch() {
		return this.lease.epoch();
	}

	/** @return nanoseconds until the term lapses (0 or less once it has, or once it was lost) */
	long remainingNanos() {
		return this.lost ? 0 : this.validUntilNanos - this.nanoClock.getAsLong();
	}

	/** @return whether the owner may still touch the segment's events and cursor */
	boolean valid() {
		return !this.lost && this.nanoClock.getAsLong() - this.validUntilNanos < 0;
	}

	/**
	 * @param renewed the lease as the renewal wrote it
	 * @param startedNanos the owner's clock when the renewal was sent
	 */
	void renewed(Lease renewed, long startedNanos) {
		this.lease = renewed;
		this.validUntilNanos = startedNanos + this.validForNanos;
	}

	/** The term ends now: nothing more is handled or saved under it. */
	void lose() {
		this.lost = true;
	}

	boolean lost() {
		return this.lost;
	}

}
