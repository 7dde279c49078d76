package io.cassandrajournal.projection;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagOffset;

/**
 * One segment of a projection as this instance sees it: read-only, for endpoints, health checks and meters.
 * {@link ProjectionEngine#segments(String)} answers from what this instance holds (no query);
 * {@link ProjectionEngine#readSegments(String)} also reads every segment's lease row and stored cursor, so it shows
 * the segments other instances run as well.
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
 * @param ownerlessFor with sharing, from {@link ProjectionEngine#readSegments(String)} only: how long no instance
 * has held the segment, as this instance's successive reads saw it: since a read first found its lease row absent or
 * released, or since its owner's lease lapsed (its heartbeat unchanged for the lease timeout); {@code null} while
 * it has a live owner, and always without sharing
 */
public record SegmentStatus(String range, @Nullable String owner, long epoch, boolean runsHere,
		@Nullable TagOffset cursor, @Nullable ProjectionStatus status, @Nullable Duration ownerlessFor) {
}
