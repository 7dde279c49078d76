package io.cassandrajournal.query;

import java.util.Objects;

import io.cassandrajournal.internal.Utf8Order;

/**
 * A position in the journal's event order: the time stamp of the last event delivered and its tie-breaker
 * (persistenceId, sequenceNr), what the reference calls an "offset (time stamp + tie-breaker)". It is the
 * cursor of every projection: of a tag or filter feed, where all three parts matter, and of a projection by
 * persistenceId, where the persistenceId is fixed and {@link #sequenceNr()} is the position (the time stamp is
 * kept for lag; see {@code ProjectionId#offsetFromSequenceNr}).
 * <p>
 * The name is historical (tag feeds came first); it is kept because {@code OffsetStore} implementations and
 * {@code ReadJournal} callers use it, and a record cannot be renamed behind a deprecated alias.
 * <p>
 * <b>Total order.</b> Offsets compare by time stamp, then persistenceId in Cassandra's text order (UTF-8
 * bytes), then sequence number: exactly the clustering order of {@code events_by_tag}, so "after this offset"
 * is one range read. Events with the same time stamp are therefore delivered in a fixed, repeatable order.
 *
 * @param timestamp epoch milliseconds
 * @param persistenceId tie-breaker, {@code ""} at the start
 * @param sequenceNr tie-breaker, 0 at the start
 */
public record TagOffset(long timestamp, String persistenceId, long sequenceNr) implements Comparable<TagOffset> {

	/** Before every event. */
	public static final TagOffset START = new TagOffset(0, "", 0);

	public TagOffset {
		Objects.requireNonNull(persistenceId, "persistenceId");
	}

	@Override
	public int compareTo(TagOffset other) {
		// Written out rather than a comparator chain: it runs several times per event of a live feed.
		int byTime = Long.compare(this.timestamp, other.timestamp);
		if (byTime != 0) {
			return byTime;
		}
		if (!this.persistenceId.equals(other.persistenceId)) {
			return Utf8Order.compare(this.persistenceId, other.persistenceId);
		}
		return Long.compare(this.sequenceNr, other.sequenceNr);
	}

	/**
	 * @param millis how far to move back
	 * @return the earliest offset with a time stamp {@code millis} before this one
	 */
	public TagOffset minusMillis(long millis) {
		return new TagOffset(Math.max(0, this.timestamp - millis), "", 0);
	}

}
