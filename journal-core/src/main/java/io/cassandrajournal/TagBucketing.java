package io.cassandrajournal;

import java.time.Duration;
import java.util.Locale;

/**
 * How the tag index is partitioned. The reference layout ({@link #NONE}) keeps every event of a tag in one
 * Cassandra partition, which grows without bound; a hot tag with hundreds of millions of events makes a
 * partition no node handles well. With time buckets, each tag's events are split into one partition per
 * minute, hour or day, and a small side table lists the buckets that hold events, so a query from an old
 * offset walks only the non-empty buckets, in order.
 * <p>
 * The bucket size is part of the table layout: the bucketed index lives in
 * {@code <tagIndexTable>_<unit>} ({@code events_by_tag_hour}) and its bucket list in
 * {@code <tagIndexTable>_<unit>_buckets}. Changing the size means a new pair of tables; fill them with
 * {@link io.cassandrajournal.query.TagIndexBackfill}.
 */
public enum TagBucketing {

	/** One partition per tag: the reference implementation's {@code events_by_tag} table. */
	NONE(Duration.ZERO),

	/** One partition per tag and minute (for tags written thousands of times per second). */
	MINUTE(Duration.ofMinutes(1)),

	/** One partition per tag and hour. */
	HOUR(Duration.ofHours(1)),

	/** One partition per tag and day (UTC). */
	DAY(Duration.ofDays(1));

	private final Duration size;

	TagBucketing(Duration size) {
		this.size = size;
	}

	/** @return the time span of one bucket, zero for {@link #NONE} */
	public Duration size() {
		return this.size;
	}

	/**
	 * @param timestamp an event's time stamp in epoch milliseconds
	 * @return the start (epoch milliseconds) of the bucket it belongs to
	 */
	public long bucketOf(long timestamp) {
		long millis = this.size.toMillis();
		return (millis == 0) ? 0 : Math.floorDiv(timestamp, millis) * millis;
	}

	/** @return the suffix of the bucketed tables' names ({@code hour}); empty for {@link #NONE} */
	public String tableSuffix() {
		return (this == NONE) ? "" : name().toLowerCase(Locale.ROOT);
	}

}
