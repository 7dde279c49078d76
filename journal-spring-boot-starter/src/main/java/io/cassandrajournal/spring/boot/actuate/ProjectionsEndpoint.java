package io.cassandrajournal.spring.boot.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

import io.cassandrajournal.projection.DeadLetter;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ResetInProgressException;
import io.cassandrajournal.projection.SegmentStatus;
import io.cassandrajournal.query.TagOffset;

/**
 * The {@code projections} actuator endpoint. Reads list every projection's state, cursor, lag, last error and
 * (for one projection) its dead letters, and each projection's segments ({@code segments}: range, owning instance,
 * lease epoch, cursor and lag; see {@link ProjectionViews#segment}); with sharing, the lease rows, stored cursors and
 * lag of the segments other instances run are read from Cassandra on each request
 * ({@link ProjectionEngine#readSegments}), so every instance shows every segment. A part that Cassandra does not
 * answer within 10 s ({@code segmentsError}, {@code deadLettersError}) does not fail the request. Writes steer a projection:
 * {@code POST /actuator/projections/{name}/{action}} with action {@code pause}, {@code resume},
 * {@code start}, {@code stop}, {@code reset} (optional body: {@code {"fromTimestamp": ..}} for a by-tag
 * projection, {@code {"fromSequenceNr": ..}} for a by-persistenceId one; otherwise from the beginning),
 * {@code skip} or {@code redeliver}. Input the projection cannot use (an unknown action, the other kind's
 * reset field, both fields, negative values) is a bad request (400) with the reason. A reset asked for while
 * another reset of the projection runs fails with {@link ResetInProgressException} (the running reset goes on);
 * over HTTP, {@link ProjectionsEndpointWebExtension} answers it with 409 Conflict.
 * <p>
 * Read-only by default: write operations need {@code management.endpoint.projections.access=unrestricted},
 * and the endpoint is reachable over HTTP only when listed in {@code management.endpoints.web.exposure.include}.
 */
@Endpoint(id = "projections", defaultAccess = Access.READ_ONLY)
public class ProjectionsEndpoint {

	/** How long a read waits for Cassandra (lease rows, cursors, dead letters) before answering without. */
	private static final Duration READ_TIMEOUT = Duration.ofSeconds(10);

	private final ProjectionEngine engine;

	public ProjectionsEndpoint(ProjectionEngine engine) {
		this.engine = engine;
	}

	@ReadOperation
	public Map<String, Object> projections() {
		List<ProjectionControl> controls = this.engine.projections();
		// Every projection's segments are read at once, and waited for together (10 s at most).
		List<CompletableFuture<List<SegmentStatus>>> reads = controls.stream()
			.map((control) -> this.engine.readSegments(control.id().name()).toCompletableFuture())
			.toList();
		long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
		List<Map<String, Object>> views = new ArrayList<>();
		for (int i = 0; i < controls.size(); i++) {
			views.add(view(controls.get(i), reads.get(i), deadline));
		}
		Map<String, Object> body = new LinkedHashMap<>();
		body.put("projections", views);
		return body;
	}

	private Map<String, Object> view(ProjectionControl control, CompletableFuture<List<SegmentStatus>> read,
			long deadline) {
		Map<String, Object> view = ProjectionViews.status(control.status());
		String name = control.id().name();
		List<SegmentStatus> segments;
		try {
			segments = read.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			segments = this.engine.segments(name);
		}
		catch (ExecutionException | TimeoutException ex) {
			// Cassandra did not answer: what this instance holds, and why the rest is missing.
			segments = this.engine.segments(name);
			view.put("segmentsError", "reading the lease rows and cursors failed: "
					+ ((ex.getCause() != null) ? ex.getCause() : ex));
		}
		view.put("segments", segments.stream().map(ProjectionViews::segment).toList());
		return view;
	}

	/**
	 * One projection with its segments and its first 100 dead letters. A part that cannot be read does not fail
	 * the request: the state is answered with {@code segmentsError} or {@code deadLettersError} (and
	 * {@code deadLetters} {@code null}) saying what failed.
	 * @param name the projection
	 * @return its view, {@code null} (404) for an unknown name
	 */
	@ReadOperation
	public @Nullable Map<String, Object> projection(@Selector String name) {
		ProjectionControl control = this.engine.projection(name).orElse(null);
		if (control == null) {
			return null;
		}
		CompletableFuture<List<DeadLetter>> letters;
		try {
			letters = control.deadLetters(100).toCompletableFuture();
		}
		catch (RuntimeException ex) {
			letters = CompletableFuture.failedFuture(ex);
		}
		long deadline = System.nanoTime() + READ_TIMEOUT.toNanos();
		Map<String, Object> body = view(control, this.engine.readSegments(name).toCompletableFuture(), deadline);
		try {
			body.put("deadLetters", letters.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)
				.stream().map(ProjectionViews::deadLetter).toList());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			body.put("deadLetters", null);
			body.put("deadLettersError", "interrupted while reading the dead letters");
		}
		catch (ExecutionException | TimeoutException ex) {
			body.put("deadLetters", null);
			body.put("deadLettersError", "reading the dead letters failed: "
					+ ((ex instanceof TimeoutException) ? "no answer within " + READ_TIMEOUT.toSeconds() + " s"
							: String.valueOf(ex.getCause())));
		}
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
			default -> throw invalid("Unknown action '" + action
					+ "'; use pause, resume, start, stop, reset, skip or redeliver");
		}
		body.put("status", ProjectionViews.status(control.status()));
		return body;
	}

	/**
	 * @return where a reset continues: a by-tag projection takes {@code fromTimestamp}, a by-persistenceId
	 * projection {@code fromSequenceNr} (the projection's identity makes the offset); neither means from the
	 * beginning
	 * @throws InvalidEndpointRequestException (400) naming what is wrong
	 */
	private static TagOffset offset(ProjectionControl control, @Nullable Long fromTimestamp, @Nullable Long fromSequenceNr) {
		if (fromTimestamp != null && fromSequenceNr != null) {
			throw invalid("Give fromTimestamp or fromSequenceNr, not both");
		}
		try {
			if (fromSequenceNr != null) {
				return control.id().offsetFromSequenceNr(fromSequenceNr);
			}
			if (fromTimestamp != null) {
				return control.id().offsetFromTimestamp(fromTimestamp);
			}
		}
		catch (IllegalArgumentException ex) {
			throw invalid(ex.getMessage());
		}
		return TagOffset.START;
	}

	private static InvalidEndpointRequestException invalid(String reason) {
		return new InvalidEndpointRequestException(reason, reason);
	}

	/**
	 * Waits for an operation. An argument the projection refuses is a bad request (400); a reset refused because
	 * another reset of the projection runs is thrown as the {@link ResetInProgressException} itself (an
	 * {@link IllegalStateException}), which {@link ProjectionsEndpointWebExtension} answers with 409 over HTTP; any
	 * other failure is an {@link IllegalStateException} (500).
	 */
	private static <T> T join(CompletionStage<T> stage) {
		try {
			return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
		}
		catch (ExecutionException ex) {
			Throwable cause = unwrap(ex);
			if (cause instanceof IllegalArgumentException refused) {
				throw invalid(refused.getMessage());
			}
			if (cause instanceof ResetInProgressException inProgress) {
				throw inProgress;
			}
			throw new IllegalStateException("Projection operation failed: " + cause, cause);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for the projection operation", ex);
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException("Projection operation did not complete within 60 s", ex);
		}
	}

	private static Throwable unwrap(Throwable error) {
		Throwable current = error;
		while ((current instanceof ExecutionException || current instanceof CompletionException)
				&& current.getCause() != null) {
			current = current.getCause();
		}
		return current;
	}

}
