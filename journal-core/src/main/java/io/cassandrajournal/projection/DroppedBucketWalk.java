package io.cassandrajournal.projection;

import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where this fits: the memory of a by-tag projection's {@link DroppedBucketCheck} that outlives its source (one per
 * projection, or per segment of a shared one, kept by the engine as {@link SteppedOverGaps} is): the earliest cursor
 * since the marks were last read successfully, when that was, and the marks read. The runner creates a new source,
 * and so a new check, after any failed poll, read, dead-letter or offset store; a check that started from the stored
 * offset would forget a walk that crossed a range dropped since the last read (docs/reliability.md, finding 23,
 * Review, item 3). In memory only: a restart of the application, or a lease that moves to another process, starts
 * again from the stored offset, so a drop walked across since the last read before it is not reported; a wrong
 * report cannot come of it (only marks above the stored offset are reported; docs/reliability.md, finding 23).
 */
final class DroppedBucketWalk {

	/** The earliest cursor (epoch millis) since the marks were last read; MAX_VALUE before any cursor. */
	private long walkedFrom = Long.MAX_VALUE;

	/** When the marks were last read successfully (epoch millis); {@link Long#MIN_VALUE} before the first read. */
	private long checkedAt = Long.MIN_VALUE;

	private final Map<String, Instant> marks = new LinkedHashMap<>();

	/** @param cursor a cursor a source starts after or reached: the walk since the last read began no later */
	synchronized void walked(long cursor) {
		this.walkedFrom = Math.min(this.walkedFrom, cursor);
	}

	/** @return the earliest cursor since the marks were last read (MAX_VALUE if none) */
	synchronized long walkedFrom() {
		return this.walkedFrom;
	}

	/** @return when the marks were last read successfully; {@link Long#MIN_VALUE} before the first read */
	synchronized long checkedAt() {
		return this.checkedAt;
	}

	/**
	 * A successful read of the marks: the walk starts again from the current cursor.
	 * @param read the marks read (tag to mark)
	 * @param at when the read started (epoch millis)
	 * @param cursor the cursor now
	 */
	synchronized void checked(Map<String, Instant> read, long at, long cursor) {
		this.marks.putAll(read);
		this.checkedAt = at;
		this.walkedFrom = cursor;
	}

	/** @return the marks read so far (tag to mark) */
	synchronized Map<String, Instant> marks() {
		return Map.copyOf(this.marks);
	}

}
