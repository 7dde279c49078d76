package io.cassandrajournal.projection;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.PersistentEvent;

/**
 * A projection's run state, the one owner of it: the {@link ProjectionState}, the generation that tells a
 * stale batch or start from the current one, the events of the batch in flight that are failing, and
 * the event a FAILED projection stopped at. Every method is atomic; the stalled meter follows the state.
 * Where this fits: {@link ProjectionRunner} drives it from control calls and its poll loop,
 * {@link FailureHandling} from the outcome of each event.
 */
final class RunState {

	/** What a skip request targets: the event's key, and whether the projection must be started again. */
	record Skip(String key, boolean restart) {
	}

	private final ProjectionMetrics metrics;

	private ProjectionState state = ProjectionState.STOPPED;

	/** Bumped by every start and stop: a batch or a start begun under another generation is stale. */
	private long generation;

	/** The generation the batch in flight was started under. */
	private long batchGeneration;

	/**
	 * Events of the batch in flight whose last attempt failed and that are not settled yet (retrying, or
	 * abandoned by a stop), in the order they first failed. The projection is FAILING while one is
	 * retrying; the failure series ends when the last one settles.
	 */
	private final Map<String, PersistentEvent<String>> failing = new LinkedHashMap<>();

	/** Whether a failure series is open (its start was logged, its end was not). */
	private boolean failureSeries;

	/** The event a FAILED projection stopped at. */
	private @Nullable PersistentEvent<String> stoppedAt;

	private @Nullable String lastError;

	/** Whether this run may still touch its events (false once a shared segment's lease lapsed or was lost). */
	private final BooleanSupplier mayGoOn;

	RunState(ProjectionMetrics metrics) {
		this(metrics, () -> true);
	}

	RunState(ProjectionMetrics metrics, BooleanSupplier mayGoOn) {
		this.metrics = metrics;
		this.mayGoOn = mayGoOn;
	}

	static boolean active(ProjectionState state) {
		return state == ProjectionState.RUNNING || state == ProjectionState.FAILING;
	}

	static String key(PersistentEvent<?> event) {
		return event.persistenceId() + "#" + event.sequenceNr();
	}

	synchronized ProjectionState state() {
		return this.state;
	}

	synchronized boolean active() {
		return active(this.state);
	}

	synchronized @Nullable String lastError() {
		return this.lastError;
	}

	synchronized void lastError(String error) {
		this.lastError = error;
	}

	/** @return the new generation, or {@code -1} when the projection is active already */
	synchronized long start() {
		if (active(this.state)) {
			return -1;
		}
		this.state = ProjectionState.RUNNING;
		this.stoppedAt = null;
		this.metrics.stalled(false);
		return ++this.generation;
	}

	/** Stops a projection (a FAILED one stays FAILED); whatever runs under the old generation ends. */
	synchronized void stop() {
		if (this.state != ProjectionState.FAILED) {
			this.state = ProjectionState.STOPPED;
		}
		this.generation++;
	}

	/** Marks the projection STOPPED, also when it was FAILED (a reset stored a new offset). */
	synchronized void stopped() {
		this.state = ProjectionState.STOPPED;
	}

	/** @return whether a start of this generation may still go on */
	synchronized boolean current(long started) {
		return this.generation == started && active(this.state);
	}

	synchronized boolean isGeneration(long started) {
		return this.generation == started;
	}

	/** @return whether the projection was active and is PAUSED now */
	synchronized boolean pause() {
		if (!active(this.state)) {
			return false;
		}
		this.state = ProjectionState.PAUSED;
		return true;
	}

	/** @return whether the projection was PAUSED and is active again */
	synchronized boolean resume() {
		if (this.state != ProjectionState.PAUSED) {
			return false;
		}
		this.state = this.failing.isEmpty() ? ProjectionState.RUNNING : ProjectionState.FAILING;
		return true;
	}

	/** A batch starts under the current generation. */
	synchronized void batchStarted() {
		this.batchGeneration = this.generation;
	}

	/** @return whether a new batch may be read (the projection is active and, if shared, its lease is valid) */
	synchronized boolean mayRead() {
		return active(this.state) && this.mayGoOn.getAsBoolean();
	}

	/** @return whether the batch in flight may go on with its next event or retry */
	synchronized boolean batchGoesOn() {
		return this.state != ProjectionState.STOPPED && this.state != ProjectionState.FAILED
				&& this.generation == this.batchGeneration && this.mayGoOn.getAsBoolean();
	}

	/**
	 * The batch in flight ended: what still counts as failing was abandoned with it (the next batch delivers
	 * it again), so a FAILING projection is RUNNING again.
	 */
	synchronized void batchEnded() {
		this.failing.clear();
		if (this.state == ProjectionState.FAILING) {
			this.state = ProjectionState.RUNNING;
		}
		this.metrics.stalled(this.state == ProjectionState.FAILED);
	}

	/**
	 * An attempt on an event failed.
	 * @param retry whether it will be retried (the projection is FAILING meanwhile)
	 * @return whether this failure starts a failure series
	 */
	synchronized boolean eventFailed(PersistentEvent<String> event, boolean retry, String error) {
		this.lastError = error;
		this.failing.putIfAbsent(key(event), event);
		boolean starts = !this.failureSeries;
		this.failureSeries = true;
		if (retry) {
			if (this.state == ProjectionState.RUNNING) {
				this.state = ProjectionState.FAILING;
			}
			this.metrics.stalled(true);
		}
		return starts;
	}

	/**
	 * The event no longer fails (handled or dead-lettered). The failure series ends (FAILING back to RUNNING,
	 * the stalled meter back to 0) only when no other lane's event is still failing.
	 * @return whether the failure series ended
	 */
	synchronized boolean eventSettled(PersistentEvent<String> event) {
		if (!this.failureSeries) {
			return false;
		}
		this.failing.remove(key(event));
		if (!this.failing.isEmpty()) {
			return false;
		}
		this.failureSeries = false;
		if (this.state == ProjectionState.FAILING) {
			this.state = ProjectionState.RUNNING;
		}
		this.metrics.stalled(this.state == ProjectionState.FAILED);
		return true;
	}

	/**
	 * Stops the projection at an event (the first lane to stop names it) or before reading.
	 * @return whether this call stopped it (it was not FAILED already)
	 */
	synchronized boolean fail(String error, @Nullable PersistentEvent<String> event) {
		if (this.state == ProjectionState.FAILED) {
			return false;
		}
		this.state = ProjectionState.FAILED;
		this.stoppedAt = event;
		this.lastError = error;
		this.metrics.stalled(true);
		return true;
	}

	/**
	 * An operator asks to skip the current event: the one a FAILED projection stopped at (it becomes
	 * STOPPED, to be started again), or the first of the batch in flight that is still failing.
	 * @return the target, or {@code null} when there is none
	 */
	synchronized @Nullable Skip skip() {
		PersistentEvent<String> target = (this.state == ProjectionState.FAILED) ? this.stoppedAt
				: this.failing.values().stream().findFirst().orElse(null);
		if (target == null) {
			return null;
		}
		boolean restart = this.state == ProjectionState.FAILED;
		if (restart) {
			this.state = ProjectionState.STOPPED;
		}
		return new Skip(key(target), restart);
	}

}
