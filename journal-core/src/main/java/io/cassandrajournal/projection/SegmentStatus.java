package io.cassandrajournal.projection;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagOffset;

/**
 * One segment of a projection as this instance sees it: read-only, for endpoints, health checks and meters.
 * {@link ProjectionEngine#segments(String)} answers from what this instance holds (no query);
 * {@link ProjectionEngine#readSegments(String)} also reads every segment's lease row, stored cursor and lag, so it
 * shows the segments other instances run as well; {@link ProjectionEngine#readSegmentOwners(String)} reads only the
 * lease rows (for health checks).
 *
 * @param range the segment's slices, {@code <from>-<to>} ({@code 0-1023} for a projection of one segment)
 * @param owner the instance whose lease the segment runs under; {@code null} without sharing, and with sharing when
 * it has no lease row or its lease was released (or, from {@link ProjectionEngine#segments(String)}, when another
 * instance may hold it)
 * @param epoch the epoch of that lease ({@code 0} without one)
 * @param runsHere whether this instance runs the segment now
 * @param cursor the segment's cursor: its runner's while it runs here, else the stored one; {@code null} when none
 * is stored (it starts from the beginning) or it was not read
 * @param status its runner's status (state, lag, events handled) while it runs here, else {@code null}
 * @param ownerlessFor with sharing, from {@link ProjectionEngine#readSegments(String)} and
 * {@link ProjectionEngine#readSegmentOwners(String)} only: how long the segment has gone without a live owner,
 * counted from the last sign of one this instance's reads saw: from the first read that found its lease row absent
 * or released, or, when the row names an owner, from the first read that saw its current heartbeat; such a row
 * counts as ownerless only once that heartbeat stayed unchanged for the lease timeout (the lease lapsed), and is
 * then reported with its whole silence, lease timeout included. {@code null} while it has a live owner, and always
 * without sharing. A crashed owner's segment is thus ownerless for about the lease timeout when its lease lapses.
 * @param lagEvents events after the segment's cursor not yet handled: its runner's count while it runs here
 * ({@link ProjectionStatus#lagEvents()}); for a segment run elsewhere (or by nobody), from
 * {@link ProjectionEngine#readSegments(String)} only, counted from its stored cursor against the journal the same
 * way (for a by-tag projection, the matching events among the next {@value ProjectionStatus#LAG_COUNT_LIMIT} index
 * rows, all segments' events: an upper bound of the segment's, and a stored by-tag cursor trails the last handled
 * event by the backtrack window, whose events count too); {@code null} when not counted
 */
public record SegmentStatus(String range, @Nullable String owner, long epoch, boolean runsHere,
		@Nullable TagOffset cursor, @Nullable ProjectionStatus status, @Nullable Duration ownerlessFor,
		@Nullable Long lagEvents) {

	/**
	 * A status whose lag in events is its runner's (while it runs here), else not counted.
	 * @param range see {@link #range()}
	 * @param owner see {@link #owner()}
	 * @param epoch see {@link #epoch()}
	 * @param runsHere see {@link #runsHere()}
	 * @param cursor see {@link #cursor()}
	 * @param status see {@link #status()}
	 * @param ownerlessFor see {@link #ownerlessFor()}
	 */
	public SegmentStatus(String range, @Nullable String owner, long epoch, boolean runsHere,
			@Nullable TagOffset cursor, @Nullable ProjectionStatus status, @Nullable Duration ownerlessFor) {
		this(range, owner, epoch, runsHere, cursor, status, ownerlessFor, (status != null) ? status.lagEvents() : null);
	}

}
