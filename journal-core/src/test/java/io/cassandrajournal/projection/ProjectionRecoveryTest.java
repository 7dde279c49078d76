package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recovery strategies against a handler that fails a given number of times, on the in-memory journal, with
 * the backoff recorded instead of slept.
 */
class ProjectionRecoveryTest {

	private final InMemoryJournal journal = new InMemoryJournal();

	private final RecordingRetryScheduler retries = new RecordingRetryScheduler();

	private final InMemoryOffsetStore offsets = new InMemoryOffsetStore();

	private final InMemoryDeadLetterQueue deadLetterQueue = new InMemoryDeadLetterQueue();

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal)
		.offsetStore(this.offsets)
		.deadLetterQueue(this.deadLetterQueue)
		.retryScheduler(this.retries)
		.meterRegistry(this.meters)
		.build();

	private final List<ProjectionFailure> failures = new CopyOnWriteArrayList<>();

	private final List<DeadLetter> published = new CopyOnWriteArrayList<>();

	private final List<Long> handled = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() {
		this.engine.close();
	}

	/** Appends 3 events to "account-1"; the handler fails on sequence number 2, {@code failures} times. */
	private ProjectionControl run(RecoveryStrategy strategy, int failuresOfEventTwo, ProjectionSettings base) {
		result(this.journal.append("account-1", 0, List.of(EventToAppend.of(new Deposited(1)),
				EventToAppend.of(new Deposited(2)), EventToAppend.of(new Deposited(3)))));
		AtomicInteger remaining = new AtomicInteger(failuresOfEventTwo);
		this.engine.addDeadLetterListener(this.published::add);
		ProjectionControl control = this.engine.register(Projection.byPersistenceId("view", "account-1",
				AccountEvent.class, ProjectionHandler.blocking((event) -> {
					if (event.sequenceNr() == 2 && remaining.getAndDecrement() > 0) {
						throw new IllegalStateException("boom " + remaining.get());
					}
					this.handled.add(event.sequenceNr());
				}), base.withRecoveryStrategy(strategy).withOnFailure(this.failures::add)));
		result(control.start());
		return control;
	}

	private static ProjectionSettings settings() {
		return ProjectionSettings.defaults().withRetryBackoff(Duration.ofSeconds(1), Duration.ofSeconds(60));
	}

	private List<FailureAction> actions() {
		return this.failures.stream().map(ProjectionFailure::action).toList();
	}

	@Test
	void retryAndFailRetriesThreeTimesWithDoublingBackoffThenStopsBeforeTheEvent() {
		ProjectionControl control = run(RecoveryStrategy.RETRY_AND_FAIL, 100, settings());
		await().until(() -> control.status().state() == ProjectionState.FAILED);
		assertThat(this.failures).extracting(ProjectionFailure::attempt).containsExactly(1, 2, 3, 4);
		assertThat(actions()).containsExactly(FailureAction.RETRY, FailureAction.RETRY, FailureAction.RETRY,
				FailureAction.STOP);
		assertThat(this.retries.delays).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2), Duration.ofSeconds(4));
		assertThat(this.handled).containsExactly(1L);
		assertThat(control.status().offset().sequenceNr()).as("cursor before the failed event").isEqualTo(1);
		assertThat(control.status().lastError()).contains("account-1#2").contains("boom");
		assertThat(this.meters.get("persistence.projection.stalled").gauge().value()).isEqualTo(1.0);
		assertThat(this.meters.get("persistence.projection.failures").counter().count()).isEqualTo(4.0);
		assertThat(this.published).isEmpty();
	}

	@Test
	void aStoppedProjectionResumesAtTheFailedEventOnceFixed() {
		ProjectionControl control = run(RecoveryStrategy.FAIL, 1, settings());
		await().until(() -> control.status().state() == ProjectionState.FAILED);
		assertThat(actions()).containsExactly(FailureAction.STOP);
		assertThat(this.retries.delays).isEmpty();
		result(control.start());
		await().until(() -> this.handled.size() == 3);
		assertThat(this.handled).containsExactly(1L, 2L, 3L);
		assertThat(control.status().state()).isEqualTo(ProjectionState.RUNNING);
		assertThat(this.meters.get("persistence.projection.stalled").gauge().value()).isZero();
	}

	@Test
	void retryAndFailSucceedsWhenTheHandlerRecoversWithinTheRetries() {
		ProjectionControl control = run(RecoveryStrategy.RETRY_AND_FAIL, 2, settings());
		await().until(() -> this.handled.size() == 3);
		assertThat(actions()).containsExactly(FailureAction.RETRY, FailureAction.RETRY);
		assertThat(this.retries.delays).containsExactly(Duration.ofSeconds(1), Duration.ofSeconds(2));
		assertThat(control.status().state()).isEqualTo(ProjectionState.RUNNING);
	}

	@Test
	void retryAndSkipGivesUpAfterTheRetriesAndPublishesADeadLetter() {
		ProjectionControl control = run(RecoveryStrategy.RETRY_AND_SKIP, 100, settings());
		await().until(() -> this.handled.size() == 2);
		assertThat(actions()).containsExactly(FailureAction.RETRY, FailureAction.RETRY, FailureAction.RETRY,
				FailureAction.SKIP);
		assertThat(this.handled).containsExactly(1L, 3L);
		assertThat(this.published).singleElement().satisfies((letter) -> {
			assertThat(letter.projection().name()).isEqualTo("view");
			assertThat(letter.event().sequenceNr()).isEqualTo(2);
			assertThat(letter.event().payload()).isEqualTo("{\"kind\":\"deposited\",\"amount\":2}");
			assertThat(letter.error()).contains("boom");
		});
		assertThat(result(control.deadLetters(10))).hasSize(1);
		assertThat(this.meters.get("persistence.projection.events.skipped").counter().count()).isEqualTo(1.0);
		await().until(() -> control.status().offset().sequenceNr() == 3);
	}

	@Test
	void skipGivesUpAtOnce() {
		ProjectionControl control = run(RecoveryStrategy.SKIP, 100, settings());
		await().until(() -> this.handled.size() == 2);
		assertThat(actions()).containsExactly(FailureAction.SKIP);
		assertThat(this.retries.delays).isEmpty();
		assertThat(control.status().eventsSkipped()).isEqualTo(1);
	}

	@Test
	void backoffDoublesUpToItsCap() {
		run(RecoveryStrategy.RETRY_AND_SKIP, 100,
				settings().withMaxRetries(5).withRetryBackoff(Duration.ofMillis(500), Duration.ofSeconds(3)));
		await().until(() -> this.handled.size() == 2);
		assertThat(this.retries.delays).containsExactly(Duration.ofMillis(500), Duration.ofSeconds(1),
				Duration.ofSeconds(2), Duration.ofSeconds(3), Duration.ofSeconds(3));
	}

	@Test
	void aThrowingHookDoesNotStopTheProjection() {
		result(this.journal.append("account-2", 0, List.of(EventToAppend.of(new Deposited(1)),
				EventToAppend.of(new Deposited(2)))));
		List<Long> seen = new ArrayList<>();
		ProjectionControl control = this.engine.register(Projection.byPersistenceId("hooked", "account-2",
				AccountEvent.class, ProjectionHandler.blocking((event) -> {
					if (event.sequenceNr() == 1 && seen.isEmpty()) {
						seen.add(-1L);
						throw new IllegalStateException("first attempt fails");
					}
					seen.add(event.sequenceNr());
				}), settings().withOnFailure((failure) -> {
					throw new IllegalStateException("broken reporter");
				})));
		result(control.start());
		await().until(() -> seen.size() == 3);
		assertThat(seen).containsExactly(-1L, 1L, 2L);
		assertThat(control.status().state()).isEqualTo(ProjectionState.RUNNING);
	}

	@Test
	void aHookThrowingAnErrorDoesNotKeepTheStrategyFromStoppingAtTheEvent() {
		result(this.journal.append("account-4", 0, List.of(EventToAppend.of(new Deposited(1)),
				EventToAppend.of(new Deposited(2)))));
		AtomicInteger hookCalls = new AtomicInteger();
		ProjectionControl control = this.engine.register(Projection.byPersistenceId("hooked-error", "account-4",
				AccountEvent.class, ProjectionHandler.blocking((event) -> {
					if (event.sequenceNr() == 1) {
						throw new IllegalStateException("always fails");
					}
					this.handled.add(event.sequenceNr());
				}), settings().withRecoveryStrategy(RecoveryStrategy.FAIL).withOnFailure((failure) -> {
					hookCalls.incrementAndGet();
					throw new AssertionError("broken reporter");
				})));
		result(control.start());
		// Before the fix the hook's Error failed the batch as a read or store failure: the event was read again
		// every poll interval, the hook called again, and FAIL never stopped the projection.
		await().atMost(Duration.ofSeconds(10)).until(() -> control.status().state() == ProjectionState.FAILED);
		assertThat(control.status().lastError()).contains("account-4#1");
		assertThat(hookCalls).hasValue(1);
		assertThat(this.handled).isEmpty();
	}

	@Test
	void aDeadLetterListenerThrowingAnErrorNeitherLosesTheLetterNorSilencesTheOtherListeners() {
		result(this.journal.append("account-5", 0, List.of(EventToAppend.of(new Deposited(1)),
				EventToAppend.of(new Deposited(2)))));
		this.engine.addDeadLetterListener((letter) -> {
			throw new AssertionError("broken listener");
		});
		this.engine.addDeadLetterListener(this.published::add);
		ProjectionControl control = this.engine.register(Projection.byPersistenceId("listened", "account-5",
				AccountEvent.class, ProjectionHandler.blocking((event) -> {
					if (event.sequenceNr() == 1) {
						throw new IllegalStateException("always fails");
					}
					this.handled.add(event.sequenceNr());
				}), settings().withRecoveryStrategy(RecoveryStrategy.SKIP)));
		result(control.start());
		await().atMost(Duration.ofSeconds(10)).until(() -> this.handled.size() == 1);
		assertThat(this.handled).containsExactly(2L);
		assertThat(this.published).singleElement().satisfies((letter) -> assertThat(letter.error()).contains("always fails"));
		assertThat(result(this.deadLetterQueue.list("listened", 10))).singleElement()
			.satisfies((letter) -> assertThat(letter.event().sequenceNr()).isEqualTo(1L));
		assertThat(control.status().state()).isEqualTo(ProjectionState.RUNNING);
	}

	@Test
	void anEventWhosePayloadCannotBeReadGoesThroughRecoveryToo() {
		result(this.journal.append("account-3", 0, List.of(EventToAppend.of(java.util.Map.of("kind", "unknown")),
				EventToAppend.of(new Deposited(5)))));
		ProjectionControl control = this.engine.register(Projection.byPersistenceId("typed", "account-3",
				AccountEvent.class, ProjectionHandler.blocking((event) -> this.handled.add(event.sequenceNr())),
				settings().withRecoveryStrategy(RecoveryStrategy.SKIP)));
		this.engine.addDeadLetterListener(this.published::add);
		result(control.start());
		await().until(() -> this.handled.size() == 1);
		assertThat(this.handled).containsExactly(2L);
		assertThat(this.published).singleElement().satisfies((letter) -> assertThat(letter.error()).contains("account-3#1"));
	}

	@Test
	void pauseResumeAndResetDoWhatTheySay() {
		ProjectionControl control = run(RecoveryStrategy.FAIL, 0, settings().withPollInterval(Duration.ofMillis(50)));
		await().until(() -> this.handled.size() == 3);
		control.pause();
		await().until(() -> control.status().state() == ProjectionState.PAUSED);
		result(this.journal.append("account-1", 3, List.of(EventToAppend.of(new Deposited(4)))));
		assertThat(this.handled).as("paused: nothing new handled").hasSize(3);
		control.resume();
		await().until(() -> this.handled.size() == 4);
		result(control.reset(TagOffset.START));
		await().until(() -> this.handled.size() == 8);
		assertThat(this.handled).containsExactly(1L, 2L, 3L, 4L, 1L, 2L, 3L, 4L);
		result(control.reset(new TagOffset(0, "account-1", 2)));
		await().until(() -> this.handled.size() == 10);
		assertThat(this.handled.subList(8, 10)).containsExactly(3L, 4L);
	}

	@Test
	void skipCurrentTurnsTheStuckEventIntoADeadLetterAndContinues() {
		ProjectionControl control = run(RecoveryStrategy.FAIL, 100, settings());
		await().until(() -> control.status().state() == ProjectionState.FAILED);
		control.skipCurrent();
		await().until(() -> this.handled.size() == 2);
		assertThat(this.handled).containsExactly(1L, 3L);
		assertThat(result(control.deadLetters(10))).singleElement()
			.satisfies((letter) -> assertThat(letter.error()).contains("skipped by an operator"));
	}

}
