package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link FailureHandling} on plain events with a scripted handler, an in-memory dead-letter queue and
 * retries that continue at once (everything completes on the test's thread): no Cassandra, no runner, no
 * waiting.
 */
class FailureHandlingTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final ProjectionMetrics metrics = new ProjectionMetrics(this.meters, "view");

	private final RunState run = new RunState(this.metrics);

	private final List<String> handled = new CopyOnWriteArrayList<>();

	private final List<DeadLetter> stored = new CopyOnWriteArrayList<>();

	private final AtomicInteger deadLetterInsertsFailing = new AtomicInteger();

	private final InMemoryDeadLetterQueue queue = new InMemoryDeadLetterQueue();

	private final DeadLetterQueue deadLetters = new DeadLetterQueue() {

		@Override
		public CompletionStage<Void> add(DeadLetter letter) {
			if (FailureHandlingTest.this.deadLetterInsertsFailing.getAndDecrement() > 0) {
				return CompletableFuture.failedFuture(new IllegalStateException("dead-letter table unavailable"));
			}
			FailureHandlingTest.this.stored.add(letter);
			return FailureHandlingTest.this.queue.add(letter);
		}

		@Override
		public CompletionStage<List<DeadLetter>> list(String projectionName, int limit) {
			return FailureHandlingTest.this.queue.list(projectionName, limit);
		}

		@Override
		public CompletionStage<Void> remove(DeadLetter letter) {
			return FailureHandlingTest.this.queue.remove(letter);
		}

	};

	/** Events whose handler fails (by key "a1"), with how many attempts fail. */
	private final java.util.Map<String, AtomicInteger> failures = new java.util.concurrent.ConcurrentHashMap<>();

	private final AtomicInteger attempts = new AtomicInteger();

	private FailureHandling<String> failureHandling(ProjectionSettings settings) {
		EventHandler<String> handler = EventHandler.blocking((event) -> {
			this.attempts.incrementAndGet();
			String key = key(event);
			AtomicInteger left = this.failures.get(key);
			if (left != null && left.getAndDecrement() > 0) {
				throw new IllegalStateException("handler failed on " + key);
			}
			this.handled.add(key);
		});
		Projection<String> projection = Projection.byTag("view", TagFilter.tag("t"), String.class, handler, settings);
		this.run.start();
		this.run.batchStarted();
		return new FailureHandling<>(projection, this.deadLetters, (letter) -> {
		}, new JacksonEventSerializer(), this.metrics, (delay) -> CompletableFuture.completedFuture(null), Runnable::run,
				Clock.systemUTC(), this.run);
	}

	private static PersistentEvent<String> event(String persistenceId, long sequenceNr) {
		return new PersistentEvent<>(persistenceId, sequenceNr, Instant.ofEpochMilli(sequenceNr), Set.of(),
				"\"" + persistenceId + sequenceNr + "\"");
	}

	private static String key(PersistentEvent<?> event) {
		return event.persistenceId() + event.sequenceNr();
	}

	private List<String> deadLettered() {
		return this.stored.stream().map((letter) -> key(letter.event())).toList();
	}

	@ParameterizedTest
	@CsvSource({ "FAIL, 1, STOP", "SKIP, 1, SKIP", "RETRY_AND_FAIL, 2, RETRY", "RETRY_AND_FAIL, 3, STOP",
			"RETRY_AND_SKIP, 2, RETRY", "RETRY_AND_SKIP, 3, SKIP" })
	void theRecoveryStrategyDecidesAfterEachAttempt(RecoveryStrategy strategy, int attempt, FailureAction expected) {
		ProjectionSettings settings = ProjectionSettings.defaults().withRecoveryStrategy(strategy).withMaxRetries(2);
		assertThat(FailureHandling.decide(settings, attempt)).isEqualTo(expected);
	}

	@Test
	void aHandledEventIsCounted() {
		FailureHandling<String> failureHandling = failureHandling(ProjectionSettings.defaults());

		assertThat(failureHandling.handle(event("a", 1)).toCompletableFuture()).isCompleted();

		assertThat(this.handled).containsExactly("a1");
		assertThat(failureHandling.handled()).isEqualTo(1);
		assertThat(failureHandling.lastEventTimestamp()).isEqualTo(Instant.ofEpochMilli(1));
	}

	@Test
	void retryAndSkipRetriesThenDeadLetters() {
		FailureHandling<String> failureHandling = failureHandling(
				ProjectionSettings.defaults().withRecoveryStrategy(RecoveryStrategy.RETRY_AND_SKIP).withMaxRetries(2));
		this.failures.put("a1", new AtomicInteger(10));

		assertThat(failureHandling.handle(event("a", 1)).toCompletableFuture()).isCompleted();

		assertThat(this.attempts).hasValue(3);
		assertThat(deadLettered()).containsExactly("a1");
		assertThat(failureHandling.skipped()).isEqualTo(1);
		assertThat(this.run.state()).isEqualTo(ProjectionState.RUNNING);
	}

	@Test
	void retryAndFailStopsTheProjectionAtTheEvent() {
		FailureHandling<String> failureHandling = failureHandling(
				ProjectionSettings.defaults().withRecoveryStrategy(RecoveryStrategy.RETRY_AND_FAIL).withMaxRetries(1));
		this.failures.put("a1", new AtomicInteger(10));

		CompletableFuture<Void> stage = failureHandling.handle(event("a", 1)).toCompletableFuture();

		assertThatThrownBy(stage::join).isInstanceOf(FailureHandling.StopProjection.class);
		assertThat(this.attempts).hasValue(2);
		assertThat(this.run.state()).isEqualTo(ProjectionState.FAILED);
		assertThat(this.run.lastError()).startsWith("stopped at a#1: ");
		assertThat(this.meters.get("persistence.projection.stalled").gauge().value()).isEqualTo(1.0);
	}

	@Test
	void aRetryAfterAStopEndsTheBatchInsteadOfAttemptingAgain() {
		FailureHandling<String> failureHandling = failureHandling(
				ProjectionSettings.defaults().withRecoveryStrategy(RecoveryStrategy.RETRY_AND_FAIL).withMaxRetries(5));
		this.failures.put("a1", new AtomicInteger(1));
		this.run.stop();

		CompletableFuture<Void> stage = failureHandling.handle(event("a", 1)).toCompletableFuture();

		assertThatThrownBy(stage::join).isInstanceOf(FailureHandling.StopProjection.class);
		assertThat(this.attempts).hasValue(1);
	}

	// Hole 1 at this level: a failed dead-letter insert fails the event's stage with that error (not a stop),
	// so the runner reads the batch again from the stored offset.
	@Test
	void aFailedDeadLetterInsertFailsTheEventWithThatError() {
		FailureHandling<String> failureHandling = failureHandling(
				ProjectionSettings.defaults().withRecoveryStrategy(RecoveryStrategy.SKIP));
		this.failures.put("a1", new AtomicInteger(1));
		this.deadLetterInsertsFailing.set(1);

		CompletableFuture<Void> stage = failureHandling.handle(event("a", 1)).toCompletableFuture();

		assertThatThrownBy(stage::join).isNotInstanceOf(FailureHandling.StopProjection.class)
			.hasRootCauseMessage("dead-letter table unavailable");
	}

	@Test
	void parkingDeadLettersTheLaterEventsOfTheSameEntityOnly() {
		FailureHandling<String> failureHandling = failureHandling(ProjectionSettings.defaults()
			.withRecoveryStrategy(RecoveryStrategy.SKIP)
			.withParkAfterDeadLetter(true));
		this.failures.put("a1", new AtomicInteger(1));

		for (PersistentEvent<String> event : List.of(event("a", 1), event("b", 1), event("a", 2))) {
			failureHandling.handle(event).toCompletableFuture().join();
		}

		assertThat(deadLettered()).containsExactly("a1", "a2");
		assertThat(this.handled).containsExactly("b1");
		assertThat(this.stored.get(1).error()).isEqualTo("parked behind an earlier dead letter of a");
	}

	@Test
	void parkedEntitiesAreReadBackFromTheDeadLetters() {
		this.queue.add(new DeadLetter(new ProjectionId("view", ""), event("a", 1), "earlier", Instant.EPOCH));
		FailureHandling<String> failureHandling = failureHandling(ProjectionSettings.defaults()
			.withRecoveryStrategy(RecoveryStrategy.SKIP)
			.withParkAfterDeadLetter(true));

		failureHandling.loadParked().toCompletableFuture().join();
		failureHandling.handle(event("a", 2)).toCompletableFuture().join();

		assertThat(deadLettered()).containsExactly("a2");
		assertThat(this.handled).isEmpty();
	}

	@Test
	void anOperatorsSkipDeadLettersTheRequestedEventOnce() {
		FailureHandling<String> failureHandling = failureHandling(ProjectionSettings.defaults());
		failureHandling.requestSkip("a#1");

		failureHandling.handle(event("a", 1)).toCompletableFuture().join();
		failureHandling.handle(event("a", 2)).toCompletableFuture().join();

		assertThat(deadLettered()).containsExactly("a1");
		assertThat(this.stored.get(0).error()).startsWith("skipped by an operator");
		assertThat(this.handled).containsExactly("a2");
	}

	@Test
	void redeliveryRemovesTheLettersThatAreHandledNowAndKeepsTheOthers() {
		FailureHandling<String> failureHandling = failureHandling(ProjectionSettings.defaults());
		ProjectionId id = new ProjectionId("view", "");
		this.queue.add(new DeadLetter(id, event("a", 1), "earlier", Instant.EPOCH));
		this.queue.add(new DeadLetter(id, event("b", 1), "earlier", Instant.EPOCH));
		this.failures.put("b1", new AtomicInteger(1));

		assertThat(failureHandling.redeliver().toCompletableFuture().join()).isEqualTo(1);

		assertThat(this.handled).containsExactly("a1");
		assertThat(failureHandling.deadLetters(10).toCompletableFuture().join()).extracting((letter) -> key(letter.event()))
			.containsExactly("b1");
	}

	// Hole 6 at this level: lanes' failures share one series.
	@Test
	void aSuccessInOneLaneDoesNotEndAnotherLanesRetries() {
		CompletableFuture<Void> retry = new CompletableFuture<>();
		EventHandler<String> handler = EventHandler.blocking((event) -> {
			if (key(event).equals("a1") && this.attempts.getAndIncrement() == 0) {
				throw new IllegalStateException("handler failed on a1");
			}
			this.handled.add(key(event));
		});
		Projection<String> projection = Projection.byTag("view", TagFilter.tag("t"), String.class, handler,
				ProjectionSettings.defaults().withRecoveryStrategy(RecoveryStrategy.RETRY_AND_FAIL).withMaxRetries(3));
		this.run.start();
		this.run.batchStarted();
		FailureHandling<String> failureHandling = new FailureHandling<>(projection, this.deadLetters, (letter) -> {
		}, new JacksonEventSerializer(), this.metrics, (delay) -> retry, Runnable::run, Clock.systemUTC(), this.run);

		CompletableFuture<Void> a1 = failureHandling.handle(event("a", 1)).toCompletableFuture();
		assertThat(this.run.state()).isEqualTo(ProjectionState.FAILING);
		failureHandling.handle(event("b", 1)).toCompletableFuture().join();
		assertThat(this.run.state()).as("b1's success does not end a1's retries").isEqualTo(ProjectionState.FAILING);

		retry.complete(null);

		assertThat(a1).isCompleted();
		assertThat(this.handled).containsExactly("b1", "a1");
		assertThat(this.run.state()).isEqualTo(ProjectionState.RUNNING);
		assertThat(this.meters.get("persistence.projection.stalled").gauge().value()).isZero();
	}

}
