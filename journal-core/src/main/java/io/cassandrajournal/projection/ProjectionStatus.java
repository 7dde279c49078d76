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
 * @param lagEvents events after the cursor not yet handled: exact for a by-persistenceId projection
 * (the entity's head minus the cursor); for a by-tag projection the matching events among the next
 * {@value #LAG_COUNT_LIMIT} index rows (so a lower bound when far behind). Zero once a poll found nothing
 * new; refreshed at most every {@code 2 s} while behind
 * @param lastError the last failure's description, if any
 * @param lastHandled the event handled last since it started, if any (the cursor is a resume point, which for a
 * by-tag projection lies a little before it: see {@link io.cassandrajournal.query.FeedSettings})
 */
public record ProjectionStatus(ProjectionId id, ProjectionState state, TagOffset offset, long eventsHandled,
		long eventsSkipped, @Nullable Instant lastEventTimestamp, Duration lag, long lagEvents,
		@Nullable String lastError, @Nullable HandledEvent lastHandled) {

	/** Rows a by-tag projection examines at most to count its lag in events. */
	public static final int LAG_COUNT_LIMIT = 1000;

	/**
	 * A status without the last handled event (as before it was reported).
	 * @param id the projection
	 * @param state its state
	 * @param offset its cursor
	 * @param eventsHandled events handled since it started
	 * @param eventsSkipped events skipped since it started
	 * @param lastEventTimestamp time stamp of the last handled event, if any
	 * @param lag how old the last handled event was when handled
	 * @param lagEvents events after the cursor not yet handled
	 * @param lastError the last failure's description, if any
	 */
	public ProjectionStatus(ProjectionId id, ProjectionState state, TagOffset offset, long eventsHandled,
			long eventsSkipped, @Nullable Instant lastEventTimestamp, Duration lag, long lagEvents,
			@Nullable String lastError) {
		this(id, state, offset, eventsHandled, eventsSkipped, lastEventTimestamp, lag, lagEvents, lastError, null);
	}

	/**
	 * The identity of a handled event.
	 *
	 * @param persistenceId its entity
	 * @param sequenceNr its sequence number
	 * @param timestamp when it was written
	 */
	public record HandledEvent(String persistenceId, long sequenceNr, Instant timestamp) {
	}

}
