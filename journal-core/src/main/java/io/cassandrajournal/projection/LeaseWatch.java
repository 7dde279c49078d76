package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.Optional;

/**
 * A contender's view of one segment's lease: it may take the segment when the row is absent or released, or
 * when the owner's heartbeat has not changed for the lease timeout as measured on this instance's monotonic
 * clock from the moment this instance first saw that heartbeat. No clocks are compared across machines.
 * <p>
 * This is safe against an owner that keeps renewing, because the owner stops using a lease a margin before the
 * timeout counted from the START of its last successful renewal, which is before the contender could have seen
 * that renewal's heartbeat; it is not safe against an owner that pauses mid-write, which is why cursor writes
 * are fenced as well.
 */
final class LeaseWatch {

	private final Duration timeout;

	private Optional<Lease> seen = Optional.empty();

	private long seenAtNanos;

	private boolean observed;

	LeaseWatch(Duration timeout) {
		this.timeout = timeout;
	}

	/**
	 * @param row the lease row as just read (empty if there is none)
	 * @param nowNanos this instance's {@link System#nanoTime()}, read AFTER the row's read completed (read before
	 * sending, the first sight could precede the owner's renewal by the read's latency and break the margin)
	 * @return true if the segment may be taken now, with {@code row} as the row to condition the take on
	 */
	synchronized boolean mayTake(Optional<Lease> row, long nowNanos) {
		if (row.isEmpty() || row.get().owner() == null) {
			return true;
		}
		if (!this.observed || this.seen.isEmpty() || !this.seen.get().sameTerm(row.get())) {
			this.seen = row;
			this.seenAtNanos = nowNanos;
			this.observed = true;
			return false;
		}
		return nowNanos - this.seenAtNanos >= this.timeout.toNanos();
	}

}
