package io.cassandrajournal.query;

import java.time.Duration;
import java.util.Objects;

/**
 * The knobs of a live tag feed's no-missed-events guarantee.
 * <p>
 * Events become visible in the tag index later than their time stamp says: a writer stamps an event, then
 * its batch takes a while (a slow writer, a GC pause, a replica that lags), or two application instances'
 * clocks disagree. A feed that only moved forward would skip such an event once it had passed its time
 * stamp. The feed therefore reads twice:
 * <ul>
 * <li>the <b>head</b> read moves forward up to {@code now - consistencyWindow};</li>
 * <li>a trailing <b>sweep</b> re-reads the range the head has passed, {@code backtrackWindow} behind real
 * time, and delivers the events the head did not see. Events already delivered are dropped by
 * (persistenceId, sequenceNr).</li>
 * </ul>
 * <b>Guarantee:</b> an event that becomes visible at most {@code backtrackWindow} after its time stamp is
 * delivered, once per run of the feed. An event later than that is missed by a running feed (rebuild the
 * projection, or widen the window). The sweep costs at most one extra read of each event; while catching up
 * on old events it is skipped; once it has reached {@code now - backtrackWindow} it reads again when that floor
 * has moved on by 1% of {@code backtrackWindow}, not at every poll. The offset a projection stores is the
 * sweep's (everything before it was delivered): once caught up, it trails the time of the poll that stored it by
 * up to {@code backtrackWindow} plus 1% of it (the sweep's step), so after a restart up to that much of events may
 * be delivered again (at-least-once). A poll where only the clock moved (nothing delivered or skipped, the head
 * where it was, no delivered event passed by the sweep) keeps the previously stored offset instead of the sweep's
 * newer floor, and nothing is saved: resuming from either delivers the same events, so in a quiet period the
 * stored offset stays where the last poll that moved it left it.
 *
 * @param consistencyWindow how far behind real time the head stops; 0 gives the lowest latency (late events
 * are then caught by the sweep, possibly after newer ones)
 * @param backtrackWindow how late an event may become visible and still be delivered; 0 turns the sweep off
 * (unsafe with more than one writer or any clock skew)
 * @param pageSize rows per read
 */
public record FeedSettings(Duration consistencyWindow, Duration backtrackWindow, int pageSize) {

	/** 0 ms consistency window, 10 s backtrack window, 500 rows per page. */
	public static final FeedSettings DEFAULTS = new FeedSettings(Duration.ZERO, Duration.ofSeconds(10), 500);

	public FeedSettings {
		Objects.requireNonNull(consistencyWindow, "consistencyWindow");
		Objects.requireNonNull(backtrackWindow, "backtrackWindow");
		if (consistencyWindow.isNegative() || backtrackWindow.isNegative()) {
			throw new IllegalArgumentException("consistencyWindow and backtrackWindow must not be negative");
		}
		if (pageSize < 1) {
			throw new IllegalArgumentException("pageSize must be at least 1, was " + pageSize);
		}
	}

	/**
	 * @param window the consistency window
	 * @return new settings
	 */
	public FeedSettings withConsistencyWindow(Duration window) {
		return new FeedSettings(window, this.backtrackWindow, this.pageSize);
	}

	/**
	 * @param window the backtrack window
	 * @return new settings
	 */
	public FeedSettings withBacktrackWindow(Duration window) {
		return new FeedSettings(this.consistencyWindow, window, this.pageSize);
	}

	/**
	 * @param size rows per read
	 * @return new settings
	 */
	public FeedSettings withPageSize(int size) {
		return new FeedSettings(this.consistencyWindow, this.backtrackWindow, size);
	}

}
