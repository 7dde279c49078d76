package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.RawEvents;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * What happens to one event of a projection: the attempt (decode the stored payload, call the handler), the
 * recovery decision after a failed attempt (retry, skip, stop), dead letters and the entities parked behind
 * them, an operator's skip, and the redelivery of dead letters. Where this fits: {@link ProjectionRunner}
 * hands it each event of a batch through {@link Lanes}; the state it changes lives in {@link RunState}.
 * <p>
 * Logs under the runner's category, so the log configuration of users stays as it was.
 *
 * @param <E> the payload type
 */
final class FailureHandling<E> {

	private static final Logger logger = LoggerFactory.getLogger(ProjectionRunner.class);

	private final Projection<E> projection;

	private final ProjectionId id;

	private final ProjectionSettings settings;

	private final @Nullable DeadLetterQueue deadLetters;

	private final Consumer<DeadLetter> deadLetterListener;

	private final EventSerializer serializer;

	private final ProjectionMetrics metrics;

	private final RetryScheduler retries;

	private final Executor executor;

	private final Clock clock;

	private final RunState run;

	/**
	 * Entities with a dead letter, by persistenceId, and the lowest sequence number dead-lettered: their later events
	 * (above it) are dead-lettered too (with {@code parkAfterDeadLetter}). An event at or below it is attempted: a
	 * batch read again from the stored offset after a failed save re-reads events handled before the dead letter,
	 * which are not parked behind it (review of issue 17 item 4).
	 */
	private final Map<String, Long> parked = new ConcurrentHashMap<>();

	/**
	 * The entities whose dead letters this runner parks and redelivers: all of them, or with segments the
	 * segment's (the queue keeps a projection's letters together; the other segments' runners, maybe on other
	 * instances, own the rest).
	 */
	private volatile Predicate<String> entities = (persistenceId) -> true;

	/** The key of the event an operator asked to skip, until an attempt on it takes the request. */
	private final AtomicReference<@Nullable String> skipRequested = new AtomicReference<>();

	private final AtomicLong handled = new AtomicLong();

	private final AtomicLong skipped = new AtomicLong();

	private final AtomicReference<@Nullable Instant> lastEventTimestamp = new AtomicReference<>();

	private final AtomicReference<ProjectionStatus.@Nullable HandledEvent> lastHandled = new AtomicReference<>();

	FailureHandling(Projection<E> projection, @Nullable DeadLetterQueue deadLetters,
			Consumer<DeadLetter> deadLetterListener, EventSerializer serializer, ProjectionMetrics metrics,
			RetryScheduler retries, Executor executor, Clock clock, RunState run) {
		this.projection = projection;
		this.id = projection.id();
		this.settings = projection.settings();
		this.deadLetters = deadLetters;
		this.deadLetterListener = deadLetterListener;
		this.serializer = serializer;
		this.metrics = metrics;
		this.retries = retries;
		this.executor = executor;
		this.clock = clock;
		this.run = run;
	}

	long handled() {
		return this.handled.get();
	}

	long skipped() {
		return this.skipped.get();
	}

	@Nullable Instant lastEventTimestamp() {
		return this.lastEventTimestamp.get();
	}

	ProjectionStatus.@Nullable HandledEvent lastHandled() {
		return this.lastHandled.get();
	}

	/** The next attempt on the event with this key dead-letters it instead. */
	void requestSkip(String key) {
		this.skipRequested.set(key);
	}

	/** @param which the entities (by persistenceId) whose dead letters this runner parks and redelivers */
	void entities(Predicate<String> which) {
		this.entities = which;
	}

	/** Reads the parked entities again from the dead letters (with {@code parkAfterDeadLetter}). */
	CompletionStage<Void> loadParked() {
		if (!this.settings.parkAfterDeadLetter() || this.deadLetters == null) {
			return CompletableFuture.completedFuture(null);
		}
		return this.deadLetters.list(this.id.name(), 100_000).thenAccept((letters) -> {
			this.parked.clear();
			ours(letters).forEach(this::park);
		});
	}

	private List<DeadLetter> ours(List<DeadLetter> letters) {
		Predicate<String> which = this.entities;
		return letters.stream().filter((letter) -> which.test(letter.event().persistenceId())).toList();
	}

	private void park(DeadLetter letter) {
		this.parked.merge(letter.event().persistenceId(), letter.event().sequenceNr(), Math::min);
	}

	/**
	 * Handles one event of a batch: dead-letters it when its entity is parked behind an earlier event, otherwise
	 * attempts it and recovers from failures as the settings say.
	 * @return completes when the event is settled; fails with {@link StopProjection} when the projection
	 * stops at it (or was stopped while it waited for a retry), with another error when dead-lettering failed
	 */
	CompletionStage<Void> handle(PersistentEvent<String> event) {
		Long parkedFrom = this.parked.get(event.persistenceId());
		if (parkedFrom != null && event.sequenceNr() > parkedFrom) {
			return deadLetter(event, "parked behind an earlier dead letter of " + event.persistenceId());
		}
		return attempt(event, 1);
	}

	private CompletionStage<Void> attempt(PersistentEvent<String> event, int attempt) {
		String requested = this.skipRequested.get();
		if (requested != null && RunState.key(event).equals(requested)
				&& this.skipRequested.compareAndSet(requested, null)) {
			String lastError = this.run.lastError();
			return deadLetter(event, "skipped by an operator" + ((lastError != null) ? " after: " + lastError : ""));
		}
		long started = System.nanoTime();
		return invoke(event).handle((ok, error) -> {
			if (error == null) {
				succeeded(event, started);
				return CompletableFuture.<Void>completedFuture(null);
			}
			return failed(event, attempt, Errors.unwrap(error));
		}).thenCompose((stage) -> stage);
	}

	/**
	 * Decodes the stored payload (running the upcasters) and calls the handler, once per part when an upcaster
	 * split the event, each after the previous one completed; whatever the decoding or the handler throws
	 * becomes a failed stage, so it goes through the recovery strategy of the stored event as a whole (a retry
	 * delivers every part again).
	 */
	CompletionStage<Void> invoke(PersistentEvent<String> event) {
		try {
			return EventHandler.inOrder(RawEvents.deserialize(event, this.serializer, this.projection.payloadType()),
					this.projection.handler());
		}
		catch (Throwable ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private void succeeded(PersistentEvent<String> event, long started) {
		this.handled.incrementAndGet();
		this.metrics.handled(Duration.ofNanos(System.nanoTime() - started));
		this.lastEventTimestamp.set(event.timestamp());
		this.lastHandled.set(new ProjectionStatus.HandledEvent(event.persistenceId(), event.sequenceNr(), event.timestamp()));
		settled(event, "handled");
	}

	private void settled(PersistentEvent<String> event, String how) {
		if (this.run.eventSettled(event)) {
			logger.error("Projection {}: failure series ended, {}#{} {}", this.id, event.persistenceId(),
					event.sequenceNr(), how);
		}
	}

	private CompletionStage<Void> failed(PersistentEvent<String> event, int attempt, Throwable error) {
		FailureAction action = decide(this.settings, attempt);
		this.metrics.failure();
		String lastError = event.persistenceId() + "#" + event.sequenceNr() + ": " + error;
		try {
			this.settings.onFailure().accept(new ProjectionFailure(this.id, event, error, attempt, action));
		}
		catch (Throwable hookError) {
			// Any throwable but a fatal one: an AssertionError or a NoClassDefFoundError from the user's reporter
			// must not fail the batch, or the strategy would never be applied and the event read again forever.
			Errors.rethrowIfFatal(hookError);
			logger.warn("Projection {}: the onFailure hook threw; ignored", this.id, hookError);
		}
		if (this.run.eventFailed(event, action == FailureAction.RETRY, lastError)) {
			logger.error("Projection {}: failure series started at {}#{} ({}, attempt {}, next: {}): {}", this.id,
					event.persistenceId(), event.sequenceNr(), this.settings.recoveryStrategy(), attempt, action,
					error.toString());
		}
		else {
			logger.debug("Projection {}: attempt {} on {}#{} failed, next: {}", this.id, attempt, event.persistenceId(),
					event.sequenceNr(), action, error);
		}
		switch (action) {
			case RETRY:
				return this.retries.after(this.settings.backoff(attempt)).thenComposeAsync((ignored) -> {
					if (!this.run.batchGoesOn()) {
						return CompletableFuture.failedFuture(new StopProjection());
					}
					return attempt(event, attempt + 1);
				}, this.executor);
			case SKIP:
				return deadLetter(event, error.toString());
			default:
				fail("stopped at " + event.persistenceId() + "#" + event.sequenceNr(), error, event);
				return CompletableFuture.failedFuture(new StopProjection());
		}
	}

	/** @return what the recovery strategy does after the given failed attempt (1 for the first) */
	static FailureAction decide(ProjectionSettings settings, int attempt) {
		return switch (settings.recoveryStrategy()) {
			case FAIL -> FailureAction.STOP;
			case SKIP -> FailureAction.SKIP;
			case RETRY_AND_FAIL -> (attempt <= settings.maxRetries()) ? FailureAction.RETRY : FailureAction.STOP;
			case RETRY_AND_SKIP -> (attempt <= settings.maxRetries()) ? FailureAction.RETRY : FailureAction.SKIP;
		};
	}

	/** Stops the projection at an event (the first lane to stop names it) or before reading. */
	void fail(String what, Throwable error, @Nullable PersistentEvent<String> event) {
		if (this.run.fail(what + ": " + error, event)) {
			logger.error("Projection {} {}; its cursor stays before the event (fix and restart, or skip it): {}",
					this.id, what, error.toString());
		}
	}

	private CompletionStage<Void> deadLetter(PersistentEvent<String> event, String error) {
		this.skipped.incrementAndGet();
		this.metrics.skipped();
		DeadLetter letter = new DeadLetter(this.id, event, error, this.clock.instant());
		try {
			this.deadLetterListener.accept(letter);
		}
		catch (Throwable listenerError) {
			Errors.rethrowIfFatal(listenerError);
			logger.warn("Projection {}: a dead-letter listener threw; ignored", this.id, listenerError);
		}
		if (this.settings.parkAfterDeadLetter()) {
			park(letter);
		}
		logger.warn("Projection {}: {}#{} skipped as a dead letter: {}", this.id, event.persistenceId(),
				event.sequenceNr(), error);
		settled(event, "skipped");
		return (this.deadLetters != null) ? this.deadLetters.add(letter) : CompletableFuture.completedFuture(null);
	}

	CompletionStage<List<DeadLetter>> deadLetters(int limit) {
		return (this.deadLetters != null) ? this.deadLetters.list(this.id.name(), limit)
				: CompletableFuture.completedFuture(List.of());
	}

	/**
	 * Hands every dead letter of this runner's entities to the handler again, one after another; a letter whose event is handled now is
	 * removed, one that fails again stays.
	 * @return how many were handled
	 */
	CompletionStage<Integer> redeliver() {
		DeadLetterQueue queue = this.deadLetters;
		if (queue == null) {
			return CompletableFuture.completedFuture(0);
		}
		return queue.list(this.id.name(), 10_000)
			.thenComposeAsync((letters) -> redeliver(queue, ours(letters), 0, 0), this.executor)
			.thenCompose((count) -> loadParked().thenApply((ignored) -> count));
	}

	private CompletionStage<Integer> redeliver(DeadLetterQueue queue, List<DeadLetter> letters, int index, int count) {
		if (index == letters.size()) {
			return CompletableFuture.completedFuture(count);
		}
		DeadLetter letter = letters.get(index);
		return invoke(letter.event()).handle((ok, error) -> error).thenComposeAsync((error) -> {
			if (error != null) {
				logger.warn("Projection {}: redelivery of {}#{} failed again: {}", this.id, letter.event().persistenceId(),
						letter.event().sequenceNr(), Errors.unwrap(error).toString());
				return redeliver(queue, letters, index + 1, count);
			}
			return queue.remove(letter)
				.thenComposeAsync((ignored) -> redeliver(queue, letters, index + 1, count + 1), this.executor);
		}, this.executor);
	}

	/** Ends a batch when the projection stops because of a failure, or was stopped while an event waited. */
	static final class StopProjection extends CompletionException {

		private static final long serialVersionUID = 1L;

		StopProjection() {
			super("projection stopped", null);
		}

	}

}
