package io.cassandrajournal.projection;

import java.time.Duration;

/**
 * One segment's streak of takes that could not start it (its fence or its runner failed): how many, and when it may
 * be taken again. The wait is {@code first} after the first failure, doubled at each further one, at most
 * {@code cap}. Where this fits: {@link SegmentOwnership} keeps one per failing segment, on its lease thread only,
 * so that a segment that cannot start is not taken and released at every round (finding 32).
 */
final class FailedTakes {

	private final Duration first;

	private final Duration cap;

	private int count;

	private long notBeforeNanos;

	/**
	 * @param first the wait after the first failure (the renewal interval: the next round)
	 * @param cap the longest wait (the lease timeout)
	 */
	FailedTakes(Duration first, Duration cap) {
		this.first = first;
		this.cap = cap;
	}

	/**
	 * Counts a failed take.
	 * @param nowNanos the lease clock's time
	 * @return the wait before the next take
	 */
	Duration failed(long nowNanos) {
		this.count++;
		Duration wait = this.first.multipliedBy(1L << Math.min(this.count - 1, 20));
		if (wait.compareTo(this.cap) > 0) {
			wait = this.cap;
		}
		this.notBeforeNanos = nowNanos + wait.toNanos();
		return wait;
	}

	/**
	 * @param nowNanos the lease clock's time
	 * @return whether the wait after the latest failure has passed
	 */
	boolean mayTryAgain(long nowNanos) {
		return nowNanos - this.notBeforeNanos >= 0;
	}

	/** @return how many takes of the streak failed */
	int count() {
		return this.count;
	}

}
