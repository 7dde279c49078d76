package io.cassandrajournal.projection;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagOffset;

/**
 * A snapshot of a projection's progress.
 *
 * @param id the projection
 * @param state its state
 * @param offset its cursor (everything before was handled)
 * @param eventsHandled events handled since it started
 * @param eventsSkipped events skipped (dead letters) since it started
 * @param lastEventTimestamp time stamp of the last handled event, if any
 * @param lag how old the last handled event was when the last non-empty batch was handled (events are
 * flowing); zero once a poll finds nothing new
 * @param lastError the last failure's description, if any
 */
public record ProjectionStatus(ProjectionId id, ProjectionState state, TagOffset offset, long eventsHandled,
		long eventsSkipped, @Nullable Instant lastEventTimestamp, Duration lag, @Nullable String lastError) {
}
