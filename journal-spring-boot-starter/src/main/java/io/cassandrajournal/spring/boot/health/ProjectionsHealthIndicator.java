package io.cassandrajournal.spring.boot.health;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

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
 * (by default: stopped by its recovery strategy). With sharing (a lease timeout given), each probe also looks at
 * the projections' lease rows ({@link ProjectionEngine#readSegmentOwners}: the rows this instance's lease loop read
 * within the last two renewal intervals, else one query per projection; no stored cursor is read): a segment
 * without a live owner for longer than the lease timeout ({@link SegmentStatus#ownerlessFor()}: counted from the
 * last heartbeat or release this instance saw, so a crashed owner's segment is reported about one lease timeout
 * after its last heartbeat) is listed under {@code ownerlessSegments} and turns the health DOWN unless no state
 * does (health-down-when = never). During a normal takeover the new owner takes the segment at about the same
 * time, so a probe may see it DOWN until then (about one renewal interval). The projections are read concurrently
 * (at most 8 at a time) and the probe waits 5 s at most for all of them; a read that failed or did not answer in
 * time is reported under {@code segmentsError} (by projection) without changing the status (the journal's own
 * health covers Cassandra). A projection whose cursor was behind a range a cleanup deleted (a {@code deleteTo}, a
 * dropped tag bucket) lists it under {@code deletedEvents} without changing the status.
 */
public class ProjectionsHealthIndicator extends AbstractHealthIndicator {

	/** Lease-row reads in flight at most per probe. */
	private static final int READS_IN_FLIGHT = 8;

	/** How long a probe waits for the lease rows of all projections together. */
	private static final Duration READ_TIMEOUT = Duration.ofSeconds(5);

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
		ProjectionStatus.DeletedEvents deleted = status.deleted();
		if (deleted != null) {
			// Events a cleanup removed before the projection read them (docs/reliability.md, finding 19).
			Map<String, Object> range = new LinkedHashMap<>();
			if (deleted.tag() != null) {
				range.put("tag", deleted.tag());
				range.put("droppedBefore", String.valueOf(deleted.droppedBefore()));
			}
			else {
				range.put("persistenceId", deleted.persistenceId());
				range.put("sequenceNrs", String.valueOf(deleted.sequenceNrs()));
			}
			range.put("description", deleted.describe());
			view.put("deletedEvents", range);
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

	/**
	 * Reads every projection's owners at once ({@link ProjectionEngine#readSegmentOwners}: at most one query each,
	 * none while this instance's lease loop read the rows lately), at most {@value #READS_IN_FLIGHT} in flight,
	 * and waits for them all {@link #READ_TIMEOUT} at most: a projection whose read failed or did not answer in
	 * time is listed under {@code segmentsError}.
	 * @return whether a segment has been without a live owner for longer than the lease timeout
	 */
	private boolean ownerlessSegments(Health.Builder builder, Duration timeout) {
		List<String> names = this.engine.projections().stream().map((control) -> control.id().name()).toList();
		List<CompletableFuture<List<SegmentStatus>>> reads = readAll(names);
		try {
			CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
				.get(READ_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (ExecutionException | TimeoutException ex) {
			// Reported per projection below.
		}
		Map<String, Object> ownerless = new LinkedHashMap<>();
		Map<String, Object> errors = new LinkedHashMap<>();
		for (int i = 0; i < names.size(); i++) {
			String name = names.get(i);
			CompletableFuture<List<SegmentStatus>> read = reads.get(i);
			if (!read.isDone()) {
				read.cancel(false);
				errors.put(name, "reading the lease rows did not complete within " + READ_TIMEOUT.toMillis() + " ms");
				continue;
			}
			if (read.isCompletedExceptionally()) {
				errors.put(name, "reading the lease rows failed: " + cause(read));
				continue;
			}
			List<Map<String, Object>> late = new ArrayList<>();
			for (SegmentStatus segment : read.join()) {
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
		if (!errors.isEmpty()) {
			builder.withDetail("segmentsError", errors);
		}
		if (ownerless.isEmpty()) {
			return false;
		}
		builder.withDetail("ownerlessSegments", ownerless);
		return true;
	}

	/** Starts the reads, at most {@value #READS_IN_FLIGHT} at a time (the next starts when one completes). */
	private List<CompletableFuture<List<SegmentStatus>>> readAll(List<String> names) {
		List<CompletableFuture<List<SegmentStatus>>> reads = new ArrayList<>();
		names.forEach((name) -> reads.add(new CompletableFuture<>()));
		AtomicInteger next = new AtomicInteger();
		for (int lane = 0; lane < Math.min(READS_IN_FLIGHT, names.size()); lane++) {
			readNext(names, reads, next);
		}
		return reads;
	}

	private void readNext(List<String> names, List<CompletableFuture<List<SegmentStatus>>> reads, AtomicInteger next) {
		int i = next.getAndIncrement();
		if (i >= names.size()) {
			return;
		}
		CompletableFuture<List<SegmentStatus>> read = reads.get(i);
		if (read.isDone()) {
			// Cancelled: the probe gave up waiting; start nothing more.
			return;
		}
		CompletionStage<List<SegmentStatus>> stage;
		try {
			stage = this.engine.readSegmentOwners(names.get(i));
		}
		catch (RuntimeException ex) {
			stage = CompletableFuture.failedFuture(ex);
		}
		stage.whenComplete((segments, error) -> {
			if (error != null) {
				read.completeExceptionally(error);
			}
			else {
				read.complete(segments);
			}
			readNext(names, reads, next);
		});
	}

	private static Object cause(CompletableFuture<?> failed) {
		try {
			failed.join();
			return "none";
		}
		catch (CompletionException | CancellationException ex) {
			return (ex.getCause() != null) ? ex.getCause() : ex;
		}
	}

}
