package io.cassandrajournal.spring.boot.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import io.cassandrajournal.projection.DeadLetter;
import io.cassandrajournal.projection.ProjectionStatus;
import io.cassandrajournal.projection.SegmentStatus;
import io.cassandrajournal.query.TagOffset;

/**
 * Plain maps of projection status for JSON (endpoint and health details).
 */
public final class ProjectionViews {

	private ProjectionViews() {
	}

	/**
	 * @param status a projection's status
	 * @return its JSON-friendly view
	 */
	public static Map<String, Object> status(ProjectionStatus status) {
		Map<String, Object> view = new LinkedHashMap<>();
		view.put("name", status.id().name());
		view.put("source", status.id().key());
		view.put("state", status.state().name());
		view.put("offset", offset(status.offset()));
		view.put("eventsHandled", status.eventsHandled());
		view.put("eventsSkipped", status.eventsSkipped());
		view.put("lastEventTimestamp", (status.lastEventTimestamp() != null) ? status.lastEventTimestamp().toString() : null);
		view.put("lagMillis", status.lag().toMillis());
		view.put("lagEvents", status.lagEvents());
		view.put("lastError", status.lastError());
		return view;
	}

	/**
	 * @param segment one segment of a projection
	 * @return its JSON-friendly view: range, owner, epoch, whether it runs here, cursor, {@code lagEvents} (see
	 * {@link SegmentStatus#lagEvents()}) with {@code lagFrom} saying where it comes from ({@code runner}: the owner
	 * here counts it while running; {@code storedCursor}: counted on this request from the cursor stored in
	 * Cassandra; absent when not counted), and while it runs here its state, events handled and lag in time;
	 * {@code ownerlessForMillis} while no instance holds it
	 */
	public static Map<String, Object> segment(SegmentStatus segment) {
		Map<String, Object> view = new LinkedHashMap<>();
		view.put("range", segment.range());
		view.put("owner", segment.owner());
		view.put("epoch", segment.epoch());
		view.put("runsHere", segment.runsHere());
		TagOffset cursor = segment.cursor();
		view.put("cursor", (cursor != null) ? offset(cursor) : null);
		ProjectionStatus status = segment.status();
		view.put("lagEvents", segment.lagEvents());
		if (segment.lagEvents() != null) {
			view.put("lagFrom", (status != null) ? "runner" : "storedCursor");
		}
		if (status != null) {
			view.put("state", status.state().name());
			view.put("eventsHandled", status.eventsHandled());
			view.put("lagMillis", status.lag().toMillis());
		}
		if (segment.ownerlessFor() != null) {
			view.put("ownerlessForMillis", segment.ownerlessFor().toMillis());
		}
		return view;
	}

	private static Map<String, Object> offset(TagOffset offset) {
		Map<String, Object> view = new LinkedHashMap<>();
		view.put("timestamp", offset.timestamp());
		view.put("persistenceId", offset.persistenceId());
		view.put("sequenceNr", offset.sequenceNr());
		return view;
	}

	/**
	 * @param letter a dead letter
	 * @return its JSON-friendly view
	 */
	public static Map<String, Object> deadLetter(DeadLetter letter) {
		Map<String, Object> view = new LinkedHashMap<>();
		view.put("persistenceId", letter.event().persistenceId());
		view.put("sequenceNr", letter.event().sequenceNr());
		view.put("timestamp", letter.event().timestamp().toString());
		view.put("tags", letter.event().tags());
		view.put("payload", letter.event().payload());
		view.put("error", letter.error());
		view.put("failedAt", letter.failedAt().toString());
		return view;
	}

}
