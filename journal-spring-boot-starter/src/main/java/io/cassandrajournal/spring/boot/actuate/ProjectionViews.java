package io.cassandrajournal.spring.boot.actuate;

import java.util.LinkedHashMap;
import java.util.Map;

import io.cassandrajournal.projection.DeadLetter;
import io.cassandrajournal.projection.ProjectionStatus;

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
		Map<String, Object> offset = new LinkedHashMap<>();
		offset.put("timestamp", status.offset().timestamp());
		offset.put("persistenceId", status.offset().persistenceId());
		offset.put("sequenceNr", status.offset().sequenceNr());
		view.put("offset", offset);
		view.put("eventsHandled", status.eventsHandled());
		view.put("eventsSkipped", status.eventsSkipped());
		view.put("lastEventTimestamp", (status.lastEventTimestamp() != null) ? status.lastEventTimestamp().toString() : null);
		view.put("lagMillis", status.lag().toMillis());
		view.put("lagEvents", status.lagEvents());
		view.put("lastError", status.lastError());
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
