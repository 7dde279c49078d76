package io.cassandrajournal.spring.boot.actuate;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.query.TagOffset;

/**
 * The {@code projections} actuator endpoint. Reads list every projection's state, cursor, lag, last error and
 * (for one projection) its dead letters. Writes steer a projection:
 * {@code POST /actuator/projections/{name}/{action}} with action {@code pause}, {@code resume},
 * {@code start}, {@code stop}, {@code reset} (optional body {@code {"fromTimestamp": ..}} or
 * {@code {"fromSequenceNr": ..}}, otherwise from the beginning), {@code skip} or {@code redeliver}.
 * <p>
 * Read-only by default: write operations need {@code management.endpoint.projections.access=unrestricted},
 * and the endpoint is reachable over HTTP only when listed in {@code management.endpoints.web.exposure.include}.
 */
@Endpoint(id = "projections", defaultAccess = Access.READ_ONLY)
public class ProjectionsEndpoint {

	private final ProjectionEngine engine;

	public ProjectionsEndpoint(ProjectionEngine engine) {
		this.engine = engine;
	}

	@ReadOperation
	public Map<String, Object> projections() {
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("projections", this.engine.projections().stream().map((c) -> ProjectionViews.status(c.status())).toList());
		return body;
	}

	@ReadOperation
	public @Nullable Map<String, Object> projection(@Selector String name) {
		ProjectionControl control = this.engine.projection(name).orElse(null);
		if (control == null) {
			return null;
		}
		Map<String, Object> body = ProjectionViews.status(control.status());
		body.put("deadLetters", join(control.deadLetters(100)).stream().map(ProjectionViews::deadLetter).toList());
		return body;
	}

	@WriteOperation
	public @Nullable Map<String, Object> control(@Selector String name, @Selector String action,
			@Nullable Long fromTimestamp, @Nullable Long fromSequenceNr) {
		ProjectionControl control = this.engine.projection(name).orElse(null);
		if (control == null) {
			return null;
		}
		Map<String, Object> body = new LinkedHashMap<>();
		switch (action) {
			case "pause" -> control.pause();
			case "resume" -> control.resume();
			case "start" -> join(control.start());
			case "stop" -> join(control.stop());
			case "skip" -> control.skipCurrent();
			case "redeliver" -> body.put("redelivered", join(control.redeliverDeadLetters()));
			case "reset" -> join(control.reset(offset(control, fromTimestamp, fromSequenceNr)));
			default -> throw new IllegalArgumentException("Unknown action '" + action
					+ "'; use pause, resume, start, stop, reset, skip or redeliver");
		}
		body.put("status", ProjectionViews.status(control.status()));
		return body;
	}

	private static TagOffset offset(ProjectionControl control, @Nullable Long fromTimestamp, @Nullable Long fromSequenceNr) {
		if (fromSequenceNr != null) {
			String key = control.id().key();
			return new TagOffset(0, key.startsWith("pid:") ? key.substring(4) : "", Math.max(0, fromSequenceNr - 1));
		}
		if (fromTimestamp != null) {
			return new TagOffset(Math.max(0, fromTimestamp - 1), "", Long.MAX_VALUE);
		}
		return TagOffset.START;
	}

	private static <T> T join(java.util.concurrent.CompletionStage<T> stage) {
		try {
			return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
		}
		catch (Exception ex) {
			throw new IllegalStateException("Projection operation failed: " + ex.getMessage(), ex);
		}
	}


}
