package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;

/**
 * Where this fits: the sequence numbers a projection by persistenceId ({@link PersistenceIdSource}) stepped over
 * as crash gaps (claimed, still without an event after the journal's in-flight wait), kept so that later polls
 * read them again, at most once per {@link #RECHECK_INTERVAL}, and deliver an event that appears there late: any
 * late batch when nothing is sealed (an in-flight wait of zero), and a batch the seal does not shadow when it is
 * (a writer whose clock ran ahead by more than the wait, server-side time stamps). Kept for one projection, across the sources its runner
 * creates after a failed batch, in memory (a restart of the application forgets them), each range until
 * {@code window} after its claim (the claim time is bounded by the time stamp of the next visible event, as the
 * journal's in-flight wait bounds it), and at most {@link #MAX_RANGES} ranges (the oldest claims are dropped
 * first, with a warning). A window of zero keeps nothing.
 */
final class SteppedOverGaps {

	private static final Logger logger = LoggerFactory.getLogger(SteppedOverGaps.class);

	/** Ranges kept per projection at most. */
	static final int MAX_RANGES = 100;

	/**
	 * How often the kept ranges are read again at most: an event that appears in one is delivered within about
	 * this long, and a busy projection (which polls again as soon as a batch is handled) does not read them on
	 * every poll.
	 */
	static final Duration RECHECK_INTERVAL = Duration.ofSeconds(5);

	/** When {@link #due} last returned ranges to read (the clock's millis), or none yet. */
	private long lastRecheck = Long.MIN_VALUE;

	private final String persistenceId;

	private final Duration window;

	private final Clock clock;

	/** First sequence number of each kept range to the range. */
	private final TreeMap<Long, Gap> gaps = new TreeMap<>();

	/**
	 * @param persistenceId the entity
	 * @param window how long after its claim a stepped-over number is read again; zero keeps nothing
	 * @param clock the clock the window is measured with
	 */
	SteppedOverGaps(String persistenceId, Duration window, Clock clock) {
		this.persistenceId = persistenceId;
		this.window = window;
		this.clock = clock;
	}

	/**
	 * A range kept for reading again.
	 *
	 * @param from the first sequence number
	 * @param to the last
	 * @param claimedBy the latest its numbers can have been claimed (epoch milliseconds)
	 */
	record Gap(long from, long to, long claimedBy) {
	}

	/**
	 * Keeps a range the source stepped over, unless its window has passed already.
	 * @param range the range
	 * @param claimedBy the latest its numbers can have been claimed (epoch milliseconds): the time stamp of the
	 * next visible event, or now if none was read
	 */
	synchronized void add(SequenceRange range, long claimedBy) {
		if (this.window.isZero() || claimedBy + this.window.toMillis() < this.clock.millis()) {
			return;
		}
		for (long from = range.from(); from <= range.to();) {
			// Never two entries for one number: a range read again after a failed batch may overlap a kept one.
			Map.Entry<Long, Gap> kept = this.gaps.floorEntry(from);
			if (kept != null && kept.getValue().to() >= from) {
				from = kept.getValue().to() + 1;
				continue;
			}
			Map.Entry<Long, Gap> above = this.gaps.ceilingEntry(from);
			long to = (above != null && above.getKey() <= range.to()) ? above.getKey() - 1 : range.to();
			this.gaps.put(from, new Gap(from, to, claimedBy));
			from = to + 1;
		}
		while (this.gaps.size() > MAX_RANGES) {
			Gap oldest = this.gaps.values().stream().min((x, y) -> Long.compare(x.claimedBy(), y.claimedBy())).orElseThrow();
			this.gaps.remove(oldest.from());
			logger.warn("Projection of '{}' keeps at most {} stepped-over ranges to read again: {}..{} dropped; an "
					+ "event that appears there later is not delivered (rebuild the projection to see it)",
					this.persistenceId, MAX_RANGES, oldest.from(), oldest.to());
		}
	}

	/**
	 * Drops the ranges whose window has passed and returns the others below a sequence number, at most once per
	 * {@link #RECHECK_INTERVAL} (nothing in between).
	 * @param below the source's next sequence number: numbers from it on are read by the source anyway
	 * @return the kept ranges below it, cut at it, in order
	 */
	synchronized List<SequenceRange> due(long below) {
		long now = this.clock.millis();
		boolean recheck = this.lastRecheck == Long.MIN_VALUE || now - this.lastRecheck >= RECHECK_INTERVAL.toMillis();
		List<SequenceRange> due = new ArrayList<>();
		for (Iterator<Gap> kept = this.gaps.values().iterator(); kept.hasNext();) {
			Gap gap = kept.next();
			if (gap.claimedBy() + this.window.toMillis() < now) {
				kept.remove();
				logger.info("Sequence numbers {}..{} of '{}' stepped over as a crash gap still have no event {} after "
						+ "their claim: no longer read again", gap.from(), gap.to(), this.persistenceId, this.window);
			}
			else if (recheck && gap.from() < below) {
				due.add(new SequenceRange(gap.from(), Math.min(gap.to(), below - 1)));
			}
		}
		if (!due.isEmpty()) {
			this.lastRecheck = now;
		}
		return due;
	}

	/**
	 * Forgets a number whose event was delivered (late, or by a source that read its range again).
	 * @param sequenceNr the number
	 */
	synchronized void delivered(long sequenceNr) {
		Map.Entry<Long, Gap> kept = this.gaps.floorEntry(sequenceNr);
		if (kept == null || kept.getValue().to() < sequenceNr) {
			return;
		}
		Gap gap = this.gaps.remove(kept.getKey());
		if (gap.from() < sequenceNr) {
			this.gaps.put(gap.from(), new Gap(gap.from(), sequenceNr - 1, gap.claimedBy()));
		}
		if (sequenceNr < gap.to()) {
			this.gaps.put(sequenceNr + 1, new Gap(sequenceNr + 1, gap.to(), gap.claimedBy()));
		}
	}

	/** @return whether nothing is kept */
	synchronized boolean isEmpty() {
		return this.gaps.isEmpty();
	}

}
