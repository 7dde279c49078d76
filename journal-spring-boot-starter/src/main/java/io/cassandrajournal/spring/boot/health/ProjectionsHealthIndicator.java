package io.cassandrajournal.spring.boot.health;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionState;
import io.cassandrajournal.projection.ProjectionStatus;
import io.cassandrajournal.projection.SegmentStatus;
import io.cassandrajournal.query.TagOffset;

/**
 * Every projection's state as health details; DOWN when a projection is in one of the configured states
 * (by default: stopped by its recovery strategy). With sharing (a lease timeout given), each probe also reads the
 * projections' lease rows ({@link ProjectionEngine#readSegments}): a segment no instance has held for longer than
 * the lease timeout, as successive probes of this instance saw it, is listed under {@code ownerlessSegments} and
 * turns the health DOWN unless no state does (health-down-when = never); a failed read is reported as
 * {@code segmentsError} without changing the status (the journal's own health covers Cassandra).
 */
public class ProjectionsHealthIndicator extends AbstractHealthIndicator {

	private final ProjectionEngine engine;

	private final Set<ProjectionState> downStates;

	private final @Nullable Duration leaseTimeout;

	/**
	 * @param engine the projection engine
	 * @param downStates the states that make the health DOWN (empty: never)
	 */
	public ProjectionsHealthIndicator(ProjectionEngine engine, Set<ProjectionState> downStates) {
		this(engine, downStates, null);
	}

	/**
	 * @param engine the projection engine
	 * @param downStates the states that make the health DOWN (empty: never, not even for a segment without owner)
	 * @param leaseTimeout with sharing, the lease timeout past which a segment without an owner is reported;
	 * {@code null} without sharing
	 */
	public ProjectionsHealthIndicator(ProjectionEngine engine, Set<ProjectionState> downStates,
			@Nullable Duration leaseTimeout) {
		super("Projections health check failed");
		this.engine = engine;
		this.downStates = Set.copyOf(downStates);
		this.leaseTimeout = leaseTimeout;
	}

	/** @return the lease timeout past which a segment without an owner is reported, {@code null} without sharing */
	public @Nullable Duration leaseTimeout() {
		return this.leaseTimeout;
	}

	/** @return the states that make the health DOWN */
	public Set<ProjectionState> downStates() {
		return this.downStates;
	}

	/**
	 * What a reader of the health needs: the state, the last handled event by its identity, and where reading
	 * resumes after a restart, in words (a by-tag cursor is a time stamp before the last handled event, not an
	 * event: its empty persistenceId and zero sequence number mean nothing to a reader).
	 * @param status a projection's status
	 * @return its health view
	 */
	static Map<String, Object> view(ProjectionStatus status) {
		Map<String, Object> view = new LinkedHashMap<>();
		view.put("state", status.state().name());
		view.put("source", status.id().key());
		ProjectionStatus.HandledEvent last = status.lastHandled();
		if (last != null) {
			Map<String, Object> event = new LinkedHashMap<>();
			event.put("persistenceId", last.persistenceId());
			event.put("sequenceNr", last.sequenceNr());
			event.put("timestamp", last.timestamp().toString());
			view.put("lastHandledEvent", event);
		}
		else {
			view.put("lastHandledEvent", null);
		}
		view.put("resumesFrom", resumePoint(status.offset()));
		view.put("eventsHandled", status.eventsHandled());
		view.put("eventsSkipped", status.eventsSkipped());
		view.put("lagMillis", status.lag().toMillis());
		view.put("lagEvents", status.lagEvents());
		if (status.lastError() != null) {
			view.put("lastError", status.lastError());
		}
		return view;
	}

	private static String resumePoint(TagOffset offset) {
		if (offset.equals(TagOffset.START)) {
			return "the beginning";
		}
		String time = Instant.ofEpochMilli(offset.timestamp()).toString();
		if (offset.persistenceId().isEmpty()) {
			// The tag feed's safe point trails the last handled event by up to the backtrack window.
			return "events written from " + time + " on (after a restart those already handled since then are "
					+ "delivered again: at-least-once)";
		}
		return "after " + offset.persistenceId() + " #" + offset.sequenceNr()
				+ ((offset.timestamp() > 0) ? " (written " + time + ")" : "");
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		boolean down = false;
		Map<String, Object> projections = new LinkedHashMap<>();
		for (ProjectionControl control : this.engine.projections()) {
			ProjectionStatus status = control.status();
			projections.put(status.id().name(), view(status));
			down |= this.downStates.contains(status.state());
		}
		builder.withDetail("projections", projections);
		if (this.leaseTimeout != null) {
			down |= ownerlessSegments(builder, this.leaseTimeout) && !this.downStates.isEmpty();
		}
		builder.status(down ? "DOWN" : "UP");
	}

	/** @return whether a segment has been without an owner for longer than the lease timeout */
	private boolean ownerlessSegments(Health.Builder builder, Duration timeout) {
		Map<String, Object> ownerless = new LinkedHashMap<>();
		for (ProjectionControl control : this.engine.projections()) {
			String name = control.id().name();
			List<SegmentStatus> segments;
			try {
				segments = this.engine.readSegments(name).toCompletableFuture().get(5, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
			catch (ExecutionException | TimeoutException ex) {
				builder.withDetail("segmentsError", "reading the lease rows of " + name + " failed: "
						+ ((ex.getCause() != null) ? ex.getCause() : ex));
				continue;
			}
			List<Map<String, Object>> late = new ArrayList<>();
			for (SegmentStatus segment : segments) {
				Duration without = segment.ownerlessFor();
				if (without != null && without.compareTo(timeout) > 0) {
					Map<String, Object> view = new LinkedHashMap<>();
					view.put("range", segment.range());
					view.put("lastOwner", segment.owner());
					view.put("ownerlessForMillis", without.toMillis());
					late.add(view);
				}
			}
			if (!late.isEmpty()) {
				ownerless.put(name, late);
			}
		}
		if (ownerless.isEmpty()) {
			return false;
		}
		builder.withDetail("ownerlessSegments", ownerless);
		return true;
	}

}
