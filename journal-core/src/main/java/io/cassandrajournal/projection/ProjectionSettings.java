package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

import io.cassandrajournal.query.FeedSettings;

/**
 * How a projection runs: recovery, retries and backoff, polling, the tag feed's windows, and whether later
 * events of a persistenceId wait behind its dead letters. Immutable; start from {@link #defaults()}.
 *
 * @param recoveryStrategy what to do when the handler fails (default {@link RecoveryStrategy#RETRY_AND_FAIL})
 * @param maxRetries retries after the first attempt (default 3: a bad event reaches the handler 4 times)
 * @param retryBackoff the first retry's delay, doubled each time (default 1 s)
 * @param maxRetryBackoff the cap of the delay (default 60 s)
 * @param pollInterval how long an idle projection waits before reading again (default 1 s); appends by
 * this process wake matching projections at once
 * @param feed the tag feed's windows and page size
 * @param parkAfterDeadLetter whether later events of a persistenceId that has a dead letter in this
 * projection are parked as dead letters too, keeping per-entity order until redelivery (default false)
 * @param onFailure called for every failed attempt; its own exceptions are logged and swallowed
 * @param concurrency how many events of one batch may be handled at the same time (default 1: strictly
 * one after the other). Above 1, events are spread over that many lanes by persistenceId: events of one
 * entity always run in one lane, in order, never in parallel; events of different entities may run in
 * any order relative to each other. The cursor still only moves past events that were all handled
 * @param segments how many parts a by-tag projection is split into by persistenceId slice (a power of two from
 * 1 to 1024; default 1: one cursor, exactly as before). Each segment has its own cursor and runner, sees every
 * event of its entities in order, and is what instances sharing the projection take and hand over (see
 * {@link ProjectionSharing}). More segments spread the work over more instances but each one reads the whole
 * tag feed and keeps its share. The count can be changed later without losing progress: a segment without a
 * cursor starts from the cursors of the count used before (a split copies its parent's, a merge takes the lowest
 * of its parts': at-least-once)
 * @param crashGapRecheckWindow projections by persistenceId only: how long after their claim the sequence numbers
 * stepped over as a crash gap (claimed, still without an event after the journal's in-flight wait, below a
 * visible event) are read again on every poll (default 10 minutes; 0 turns it off). An event that appears there
 * within the window (a logged batch Cassandra replays from its batch log after a node restart) is delivered
 * late, after later events of its entity, and logged: at-least-once holds for it, per-entity order does not.
 * The gaps are kept in memory (at most 100 ranges per projection): a restart forgets them. Should exceed the
 * journal's in-flight wait (30 s by default), since nothing is stepped over before that
 */
public record ProjectionSettings(RecoveryStrategy recoveryStrategy, int maxRetries, Duration retryBackoff,
		Duration maxRetryBackoff, Duration pollInterval, FeedSettings feed, boolean parkAfterDeadLetter,
		Consumer<ProjectionFailure> onFailure, int concurrency, int segments, Duration crashGapRecheckWindow) {

	/** The default {@link #crashGapRecheckWindow()}: 10 minutes. */
	public static final Duration DEFAULT_CRASH_GAP_RECHECK_WINDOW = Duration.ofMinutes(10);

	public ProjectionSettings {
		Objects.requireNonNull(crashGapRecheckWindow, "crashGapRecheckWindow");
		if (crashGapRecheckWindow.isNegative()) {
			throw new IllegalArgumentException("crashGapRecheckWindow must not be negative, was " + crashGapRecheckWindow);
		}
		Objects.requireNonNull(recoveryStrategy, "recoveryStrategy");
		Objects.requireNonNull(retryBackoff, "retryBackoff");
		Objects.requireNonNull(maxRetryBackoff, "maxRetryBackoff");
		Objects.requireNonNull(pollInterval, "pollInterval");
		Objects.requireNonNull(feed, "feed");
		Objects.requireNonNull(onFailure, "onFailure");
		if (concurrency < 1 || concurrency > 256) {
			throw new IllegalArgumentException("concurrency must be between 1 and 256, was " + concurrency);
		}
		if (segments < 1 || segments > SliceRange.SLICES || Integer.bitCount(segments) != 1) {
			throw new IllegalArgumentException("segments must be a power of two from 1 to " + SliceRange.SLICES
					+ " (so that more segments split today's ranges exactly), was " + segments);
		}
		if (maxRetries < 0) {
			throw new IllegalArgumentException("maxRetries must be 0 or more, was " + maxRetries);
		}
		if (pollInterval.isNegative() || pollInterval.isZero()) {
			throw new IllegalArgumentException("pollInterval must be positive, was " + pollInterval);
		}
		if (retryBackoff.isNegative() || maxRetryBackoff.compareTo(retryBackoff) < 0) {
			throw new IllegalArgumentException("retryBackoff must be positive and at most maxRetryBackoff, was "
					+ retryBackoff + " / " + maxRetryBackoff);
		}
	}

	/**
	 * Settings with the default {@link #crashGapRecheckWindow()} (as before it existed).
	 * @param recoveryStrategy see the record
	 * @param maxRetries see the record
	 * @param retryBackoff see the record
	 * @param maxRetryBackoff see the record
	 * @param pollInterval see the record
	 * @param feed see the record
	 * @param parkAfterDeadLetter see the record
	 * @param onFailure see the record
	 * @param concurrency see the record
	 * @param segments see the record
	 */
	public ProjectionSettings(RecoveryStrategy recoveryStrategy, int maxRetries, Duration retryBackoff,
			Duration maxRetryBackoff, Duration pollInterval, FeedSettings feed, boolean parkAfterDeadLetter,
			Consumer<ProjectionFailure> onFailure, int concurrency, int segments) {
		this(recoveryStrategy, maxRetries, retryBackoff, maxRetryBackoff, pollInterval, feed, parkAfterDeadLetter,
				onFailure, concurrency, segments, DEFAULT_CRASH_GAP_RECHECK_WINDOW);
	}

	/**
	 * Settings of one segment (as before segments existed).
	 * @param recoveryStrategy see the record
	 * @param maxRetries see the record
	 * @param retryBackoff see the record
	 * @param maxRetryBackoff see the record
	 * @param pollInterval see the record
	 * @param feed see the record
	 * @param parkAfterDeadLetter see the record
	 * @param onFailure see the record
	 * @param concurrency see the record
	 */
	public ProjectionSettings(RecoveryStrategy recoveryStrategy, int maxRetries, Duration retryBackoff,
			Duration maxRetryBackoff, Duration pollInterval, FeedSettings feed, boolean parkAfterDeadLetter,
			Consumer<ProjectionFailure> onFailure, int concurrency) {
		this(recoveryStrategy, maxRetries, retryBackoff, maxRetryBackoff, pollInterval, feed, parkAfterDeadLetter,
				onFailure, concurrency, 1);
	}

	/** @return the defaults */
	public static ProjectionSettings defaults() {
		return new ProjectionSettings(RecoveryStrategy.RETRY_AND_FAIL, 3, Duration.ofSeconds(1), Duration.ofSeconds(60),
				Duration.ofSeconds(1), FeedSettings.DEFAULTS.withPageSize(100), false, (failure) -> {
				}, 1);
	}

	public ProjectionSettings withRecoveryStrategy(RecoveryStrategy strategy) {
		return new ProjectionSettings(strategy, this.maxRetries, this.retryBackoff, this.maxRetryBackoff,
				this.pollInterval, this.feed, this.parkAfterDeadLetter, this.onFailure, this.concurrency, this.segments,
				this.crashGapRecheckWindow);
	}

	public ProjectionSettings withMaxRetries(int retries) {
		return new ProjectionSettings(this.recoveryStrategy, retries, this.retryBackoff, this.maxRetryBackoff,
				this.pollInterval, this.feed, this.parkAfterDeadLetter, this.onFailure, this.concurrency, this.segments,
				this.crashGapRecheckWindow);
	}

	public ProjectionSettings withRetryBackoff(Duration first, Duration max) {
		return new ProjectionSettings(this.recoveryStrategy, this.maxRetries, first, max, this.pollInterval, this.feed,
				this.parkAfterDeadLetter, this.onFailure, this.concurrency, this.segments,
				this.crashGapRecheckWindow);
	}

	public ProjectionSettings withPollInterval(Duration interval) {
		return new ProjectionSettings(this.recoveryStrategy, this.maxRetries, this.retryBackoff, this.maxRetryBackoff,
				interval, this.feed, this.parkAfterDeadLetter, this.onFailure, this.concurrency, this.segments,
				this.crashGapRecheckWindow);
	}

	public ProjectionSettings withFeed(FeedSettings settings) {
		return new ProjectionSettings(this.recoveryStrategy, this.maxRetries, this.retryBackoff, this.maxRetryBackoff,
				this.pollInterval, settings, this.parkAfterDeadLetter, this.onFailure, this.concurrency, this.segments,
				this.crashGapRecheckWindow);
	}

	public ProjectionSettings withParkAfterDeadLetter(boolean park) {
		return new ProjectionSettings(this.recoveryStrategy, this.maxRetries, this.retryBackoff, this.maxRetryBackoff,
				this.pollInterval, this.feed, park, this.onFailure, this.concurrency, this.segments,
				this.crashGapRecheckWindow);
	}

	public ProjectionSettings withOnFailure(Consumer<ProjectionFailure> hook) {
		return new ProjectionSettings(this.recoveryStrategy, this.maxRetries, this.retryBackoff, this.maxRetryBackoff,
				this.pollInterval, this.feed, this.parkAfterDeadLetter, hook, this.concurrency, this.segments,
				this.crashGapRecheckWindow);
	}

	/**
	 * @param lanes events handled at the same time, keyed by persistenceId (1 = sequential)
	 * @return new settings
	 */
	public ProjectionSettings withConcurrency(int lanes) {
		return new ProjectionSettings(this.recoveryStrategy, this.maxRetries, this.retryBackoff, this.maxRetryBackoff,
				this.pollInterval, this.feed, this.parkAfterDeadLetter, this.onFailure, lanes, this.segments,
				this.crashGapRecheckWindow);
	}

	/**
	 * @param count segments, a power of two from 1 to 1024 (1 = one cursor, as before)
	 * @return new settings
	 */
	public ProjectionSettings withSegments(int count) {
		return new ProjectionSettings(this.recoveryStrategy, this.maxRetries, this.retryBackoff, this.maxRetryBackoff,
				this.pollInterval, this.feed, this.parkAfterDeadLetter, this.onFailure, this.concurrency, count,
				this.crashGapRecheckWindow);
	}

	/**
	 * @param window how long after their claim a projection by persistenceId reads stepped-over crash gaps again
	 * (0 turns it off; see the record)
	 * @return new settings
	 */
	public ProjectionSettings withCrashGapRecheckWindow(Duration window) {
		return new ProjectionSettings(this.recoveryStrategy, this.maxRetries, this.retryBackoff, this.maxRetryBackoff,
				this.pollInterval, this.feed, this.parkAfterDeadLetter, this.onFailure, this.concurrency, this.segments,
				window);
	}

	/**
	 * @param retry 1 for the first retry
	 * @return the delay before that retry: {@code retryBackoff * 2^(retry-1)}, at most {@code maxRetryBackoff}
	 */
	public Duration backoff(int retry) {
		Duration delay = this.retryBackoff;
		for (int i = 1; i < retry && delay.compareTo(this.maxRetryBackoff) < 0; i++) {
			delay = delay.multipliedBy(2);
		}
		return (delay.compareTo(this.maxRetryBackoff) > 0) ? this.maxRetryBackoff : delay;
	}

}
