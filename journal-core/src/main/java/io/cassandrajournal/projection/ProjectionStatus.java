package io.cassandrajournal.projection;

import java.time.Duration;
import java.time.Instant;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
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
 * @param deleted the latest range of events a cleanup removed before this projection read them (its cursor was
 * behind a {@code deleteTo} or a dropped tag bucket) since it started, if any: stepped over, never delivered
 * (docs/reliability.md, finding 19)
 */
public record ProjectionStatus(ProjectionId id, ProjectionState state, TagOffset offset, long eventsHandled,
		long eventsSkipped, @Nullable Instant lastEventTimestamp, Duration lag, long lagEvents,
		@Nullable String lastError, @Nullable HandledEvent lastHandled, @Nullable DeletedEvents deleted) {

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
		this(id, state, offset, eventsHandled, eventsSkipped, lastEventTimestamp, lag, lagEvents, lastError, null, null);
	}

	/**
	 * A status without a deleted range (as before it was reported).
	 * @param id the projection
	 * @param state its state
	 * @param offset its cursor
	 * @param eventsHandled events handled since it started
	 * @param eventsSkipped events skipped since it started
	 * @param lastEventTimestamp time stamp of the last handled event, if any
	 * @param lag how old the last handled event was when handled
	 * @param lagEvents events after the cursor not yet handled
	 * @param lastError the last failure's description, if any
	 * @param lastHandled the event handled last since it started, if any
	 */
	public ProjectionStatus(ProjectionId id, ProjectionState state, TagOffset offset, long eventsHandled,
			long eventsSkipped, @Nullable Instant lastEventTimestamp, Duration lag, long lagEvents,
			@Nullable String lastError, @Nullable HandledEvent lastHandled) {
		this(id, state, offset, eventsHandled, eventsSkipped, lastEventTimestamp, lag, lagEvents, lastError,
				lastHandled, null);
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

	/**
	 * Events a cleanup removed before the projection read them: by persistenceId, the numbers up to the entity's
	 * deletion mark ({@code deleteTo}); by tag, the events stamped before the oldest bucket a bucket drop kept.
	 *
	 * @param persistenceId by persistenceId: the entity; {@code null} by tag
	 * @param sequenceNrs by persistenceId: the deleted numbers from the projection's cursor on; {@code null} by tag
	 * @param tag by tag: the tag whose buckets were dropped; {@code null} by persistenceId
	 * @param droppedBefore by tag: events of the tag stamped before it were dropped; {@code null} by persistenceId
	 */
	public record DeletedEvents(@Nullable String persistenceId, @Nullable SequenceRange sequenceNrs,
			@Nullable String tag, @Nullable Instant droppedBefore) {

		/**
		 * @param persistenceId the entity
		 * @param sequenceNrs the deleted numbers from the cursor on
		 * @return a range deleted by {@code deleteTo}
		 */
		public static DeletedEvents byPersistenceId(String persistenceId, SequenceRange sequenceNrs) {
			return new DeletedEvents(persistenceId, sequenceNrs, null, null);
		}

		/**
		 * @param tag the tag
		 * @param droppedBefore the start of the oldest bucket kept
		 * @return a range dropped with the tag's buckets
		 */
		public static DeletedEvents byTag(String tag, Instant droppedBefore) {
			return new DeletedEvents(null, null, tag, droppedBefore);
		}

		/** @return the range in words, for the log and the health */
		public String describe() {
			if (this.tag != null) {
				return "events of tag '" + this.tag + "' written before " + this.droppedBefore
						+ " were dropped (their tag buckets were dropped by a retention cleanup) before this projection "
						+ "read them: they are not delivered";
			}
			return "events " + this.sequenceNrs + " of '" + this.persistenceId
					+ "' were deleted (deleteTo or a retention cleanup) before this projection read them: stepped over";
		}

	}

}
