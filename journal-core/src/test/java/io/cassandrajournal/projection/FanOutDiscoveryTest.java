package io.cassandrajournal.projection;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import ch.qos.logback.classic.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryDurableStateStore;
import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.state.DurableStateConflictException;
import io.cassandrajournal.testing.JournalLogs;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The per-persistenceId fan-out without sharing, over the in-memory journal: a handler factory that throws (an
 * exception or an {@link Error}) for one entity fails that entity only. The others of the same discovery batch, and
 * entities created later, run; the failed one is registered as a FAILED projection with the factory's error, its
 * stored cursor and its stored dead letters, logged, and tried again by its start, which fails while the factory
 * still throws, is skipped once the engine stopped meanwhile, and after which the old handle steers the new
 * projection. Waits are bounded by {@link #BOUND}.
 */
class FanOutDiscoveryTest {

	private static final Duration BOUND = Duration.ofSeconds(10);

	private static final Duration DISCOVERY = Duration.ofMillis(50);

	private static final ProjectionId E2 = ProjectionId.byPersistenceId("view-e2", "e2");

	private final InMemoryJournal journal = new InMemoryJournal();

	private final InMemoryOffsetStore offsets = new InMemoryOffsetStore();

	private final InMemoryDeadLetterQueue letters = new InMemoryDeadLetterQueue();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal)
		.readJournal(this.journal.readJournal())
		.offsetStore(this.offsets)
		.deadLetterQueue(this.letters)
		.build();

	private final JournalLogs logs = JournalLogs.capture();

	private final Map<String, List<String>> seen = new ConcurrentHashMap<>();

	/** While set, the factory throws what it supplies for e2. */
	private final AtomicReference<Supplier<? extends Throwable>> failure = new AtomicReference<>();

	/** While set, the factory waits for it before it makes e2's handler (counting down {@link #entered}). */
	private final AtomicReference<CountDownLatch> gate = new AtomicReference<>();

	private final CountDownLatch entered = new CountDownLatch(1);

	@AfterEach
	void close() {
		this.engine.close();
		this.logs.close();
	}

	private void append(String persistenceId, long expected, String... payloads) {
		List<EventToAppend> events = Arrays.stream(payloads).map((p) -> EventToAppend.of(p)).toList();
		result(this.journal.append(persistenceId, expected, events));
	}

	/**
	 * Entities e1 to e5 (listed in this order: the failing e2 is second, three more follow it in the same batch), a
	 * fan-out whose factory throws for e2 what {@code failure} supplies; returns once the others were handled.
	 */
	private ProjectionControl fanOutFailingForE2(Supplier<? extends Throwable> failure) {
		this.failure.set(failure);
		for (String id : List.of("e1", "e2", "e3", "e4", "e5")) {
			append(id, 0, id + "-1", id + "-2");
		}
		this.engine.fanOut("view", String.class, (id) -> {
			Supplier<? extends Throwable> fails = this.failure.get();
			if (id.equals("e2") && fails != null) {
				throw unchecked(fails.get());
			}
			CountDownLatch wait = this.gate.get();
			if (id.equals("e2") && wait != null) {
				this.entered.countDown();
				awaitQuietly(wait);
			}
			return EventHandler.blocking((event) -> this.seen.computeIfAbsent(event.persistenceId(),
					(k) -> new CopyOnWriteArrayList<>()).add(event.payload().replace("\"", "")));
		}, ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20)), DISCOVERY);
		await("the other entities of the batch handled").atMost(BOUND).until(() -> List.of("e1", "e3", "e4", "e5")
			.stream().allMatch((id) -> this.seen.getOrDefault(id, List.of()).size() == 2));
		return this.engine.projection("view-e2").orElseThrow();
	}

	private static RuntimeException unchecked(Throwable failure) {
		if (failure instanceof Error error) {
			throw error;
		}
		return (RuntimeException) failure;
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			latch.await(BOUND.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Test
	void aHandlerFactoryThatThrowsForOneEntityFailsThatEntityOnly() {
		ProjectionControl failed = fanOutFailingForE2(() -> new IllegalStateException("no handler for e2 today"));
		append("e6", 0, "e6-1");
		await("an entity created later handled").atMost(BOUND)
			.until(() -> this.seen.getOrDefault("e6", List.of()).size() == 1);

		assertThat(this.seen).doesNotContainKey("e2");
		assertThat(failed.id()).isEqualTo(E2);
		assertThat(failed.status().state()).isEqualTo(ProjectionState.FAILED);
		assertThat(failed.status().lastError()).contains("no handler for e2 today");
		assertThat(this.logs.about("e2", Level.ERROR)).as("the failing entity is logged by name").isNotEmpty();
		assertThat(this.logs.about("listing persistenceIds failed", Level.WARN))
			.as("one entity's failure is not a failure of the listing").isEmpty();

		// Started again (as startAll does), it creates the handler again: once the factory works, the entity runs.
		this.failure.set(null);
		result(failed.start());
		await("the failed entity handled once started again").atMost(BOUND)
			.until(() -> this.seen.getOrDefault("e2", List.of()).size() == 2);
		assertThat(this.engine.projection("view-e2").orElseThrow().status().state()).isEqualTo(ProjectionState.RUNNING);
		assertThat(this.seen.get("e2")).containsExactly("e2-1", "e2-2");
	}

	/**
	 * An Error (a handler class that cannot be initialized) is one entity's failure too: it used to end the
	 * discovery task (scheduleWithFixedDelay stops at a throw), so the rest of the batch and every later entity
	 * never ran, and nothing was logged.
	 */
	@Test
	void anErrorFromTheHandlerFactoryFailsThatEntityOnlyAndDiscoveryGoesOn() {
		ProjectionControl failed = fanOutFailingForE2(() -> new ExceptionInInitializerError("no handler class for e2"));
		append("e6", 0, "e6-1");
		await("an entity created later handled").atMost(BOUND)
			.until(() -> this.seen.getOrDefault("e6", List.of()).size() == 1);

		assertThat(this.seen).doesNotContainKey("e2");
		assertThat(failed.status().state()).isEqualTo(ProjectionState.FAILED);
		assertThat(failed.status().lastError()).contains("no handler class for e2");
		assertThat(this.logs.about("e2", Level.ERROR)).as("the failing entity is logged by name").isNotEmpty();
	}

	/**
	 * A StackOverflowError from the factory (a handler that recurses while it is built) is one entity's failure too:
	 * it was passed through with every VirtualMachineError, which ended the discovery task with the rest of the
	 * batch. Only OutOfMemoryError, InternalError and UnknownError pass through now.
	 */
	@Test
	void aStackOverflowFromTheHandlerFactoryFailsThatEntityOnly() {
		ProjectionControl failed = fanOutFailingForE2(() -> new StackOverflowError("handler recursed for e2"));
		assertThat(failed.status().state()).isEqualTo(ProjectionState.FAILED);
		assertThat(failed.status().lastError()).contains("handler recursed for e2");
	}

	/**
	 * startAll tries each failed entity once: it used to iterate the engine's map while each retry replaced the
	 * entity's entry in it, so entries that share a bin of the map were met again and again (in one run 202 factory
	 * calls for 2 entities; here it may not end at all, so startAll runs on a thread of its own and is bounded).
	 */
	@Test
	void startAllTriesEachFailedEntityOnce() {
		AtomicInteger calls = new AtomicInteger();
		List<String> ids = IntStream.range(0, 40).mapToObj((i) -> "f" + i).toList();
		ids.forEach((id) -> append(id, 0, id + "-1"));
		this.engine.fanOut("broken", String.class, (id) -> {
			calls.incrementAndGet();
			throw new IllegalStateException("no handler for " + id);
		}, ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20)), DISCOVERY);
		await("every entity listed as failed").atMost(BOUND)
			.until(() -> ids.stream().allMatch((id) -> this.engine.projection("broken-" + id).isPresent()));
		int before = calls.get();

		Thread starting = new Thread(() -> this.engine.startAll(), "start-all");
		starting.setDaemon(true);
		starting.start();
		await("startAll returned").atMost(BOUND).until(() -> !starting.isAlive());
		assertThat(calls.get() - before).as("one factory call per failed entity").isEqualTo(ids.size());
	}

	/** A start (or startAll) that cannot create the entity again reports the failure; the entity stays FAILED. */
	@Test
	void aStartThatCannotCreateTheEntityAgainFails() {
		ProjectionControl failed = fanOutFailingForE2(() -> new IllegalStateException("no handler for e2 today"));
		this.failure.set(() -> new IllegalStateException("still no handler for e2"));

		assertThat(failed.start().toCompletableFuture()).failsWithin(BOUND)
			.withThrowableOfType(ExecutionException.class)
			.withMessageContaining("still no handler for e2");
		assertThat(this.engine.startAll().toCompletableFuture()).failsWithin(BOUND)
			.withThrowableOfType(ExecutionException.class)
			.withMessageContaining("still no handler for e2");
		assertThat(this.engine.projection("view-e2").orElseThrow().status().state()).isEqualTo(ProjectionState.FAILED);
		assertThat(failed.status().state()).isEqualTo(ProjectionState.FAILED);
		assertThat(failed.status().lastError()).contains("still no handler for e2");
	}

	/**
	 * The handle a caller holds (the actuator endpoint answers with it) steers the projection that replaced it:
	 * its status is the new projection's, its stop stops it, and a second start starts it again.
	 */
	@Test
	void theHandleOfAFailedEntitySteersItsProjectionOnceStartedAgain() {
		ProjectionControl failed = fanOutFailingForE2(() -> new IllegalStateException("no handler for e2 today"));
		this.failure.set(null);

		result(failed.start());
		assertThat(failed.status().state()).isEqualTo(ProjectionState.RUNNING);
		assertThat(failed.status().lastError()).isNull();
		await("the failed entity handled once started again").atMost(BOUND)
			.until(() -> this.seen.getOrDefault("e2", List.of()).size() == 2);

		result(failed.stop());
		assertThat(this.engine.projection("view-e2").orElseThrow().status().state()).isEqualTo(ProjectionState.STOPPED);
		result(failed.start());
		assertThat(this.engine.projection("view-e2").orElseThrow().status().state()).isEqualTo(ProjectionState.RUNNING);
		failed.pause();
		assertThat(this.engine.projection("view-e2").orElseThrow().status().state()).isEqualTo(ProjectionState.PAUSED);
	}

	/**
	 * The letters parked under the entity's projection name (an earlier run) are listed while it is FAILED; they
	 * cannot be redelivered without a handler, which says so.
	 */
	@Test
	void aFailedEntityListsItsStoredDeadLettersAndRefusesToRedeliverThem() {
		PersistentEvent<String> event = new PersistentEvent<>("e2", 1, Instant.ofEpochMilli(1), Set.of(), "\"e2-1\"");
		result(this.letters.add(new DeadLetter(E2, event, "earlier", Instant.EPOCH)));

		ProjectionControl failed = fanOutFailingForE2(() -> new IllegalStateException("no handler for e2 today"));

		assertThat(result(failed.deadLetters(10))).extracting(DeadLetter::error).containsExactly("earlier");
		assertThat(failed.redeliverDeadLetters().toCompletableFuture()).failsWithin(BOUND)
			.withThrowableOfType(ExecutionException.class)
			.withMessageContaining("start it to try again");
		assertThat(result(this.letters.list("view-e2", 10))).as("the letter stays stored").hasSize(1);
	}

	/** Its status resumes from its stored cursor (an earlier run's), not from the beginning. */
	@Test
	void aFailedEntityReportsItsStoredCursor() {
		TagOffset stored = E2.offsetFromSequenceNr(2);
		result(this.offsets.save(E2, stored));

		ProjectionControl failed = fanOutFailingForE2(() -> new IllegalStateException("no handler for e2 today"));

		assertThat(failed.status().offset()).isEqualTo(stored);
	}

	/**
	 * The status read of a failed entity's cursor from a {@link DurableStateOffsetStore} peeks: it leaves the
	 * revision the store tracks for its own saves (and the saves of unknown outcome it remembers) as they were. A
	 * load raised the tracked revision to the stored one, so a save of this store's that another writer's newer
	 * cursor must refuse (a compare-and-set on the revision it last wrote) overwrote that cursor instead.
	 */
	@Test
	void aFailedEntitysStatusReadLeavesTheDurableStoresTrackedRevisionAlone() {
		InMemoryDurableStateStore states = new InMemoryDurableStateStore();
		DurableStateOffsetStore durable = new DurableStateOffsetStore(states);
		TagOffset ours = E2.offsetFromSequenceNr(1);
		TagOffset theirs = E2.offsetFromSequenceNr(2);
		result(durable.save(E2, ours));
		// Another writer of the same cursor (a runner of e2 elsewhere) moves it on: this store's next save conflicts.
		result(new DurableStateOffsetStore(states).save(E2, theirs));
		for (String id : List.of("e1", "e2")) {
			append(id, 0, id + "-1");
		}
		try (ProjectionEngine durableEngine = ProjectionEngine.builder(this.journal)
			.readJournal(this.journal.readJournal())
			.offsetStore(durable)
			.build()) {
			durableEngine.fanOut("view", String.class, (id) -> {
				if (id.equals("e2")) {
					throw new IllegalStateException("no handler for e2 today");
				}
				return EventHandler.blocking((event) -> {
				});
			}, ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20)), DISCOVERY);
			// Bound: discovered at once, the in-memory read answers at once.
			await("the failed entity shows the stored cursor").atMost(BOUND)
				.until(() -> durableEngine.projection("view-e2").map((p) -> theirs.equals(p.status().offset()))
					.orElse(false));

			assertThatThrownBy(() -> result(durable.save(E2, ours)))
				.as("this store's save over the other writer's cursor, after the status read")
				.isInstanceOf(DurableStateConflictException.class);
			assertThat(result(durable.peek(E2))).as("the stored cursor").contains(theirs);
		}
	}

	/**
	 * The cursor read of a failed entity holds no thread of the engine's pool (finding 32, item 7): it was a blocking
	 * read of up to 5 s on the discovery task's thread, one per failed entity, so with one thread nothing else ran
	 * meanwhile. Here the reads of three failing entities never answer, on an engine of one thread: the good
	 * entity of the same batch runs at once, and the failed ones say that their cursor is being read.
	 */
	@Test
	void aFailedEntitysCursorReadHoldsNoThreadOfThePool() {
		CompletableFuture<Optional<TagOffset>> never = new CompletableFuture<>();
		OffsetStore slow = new DelegatingOffsetStore(this.offsets) {

			@Override
			public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
				return id.name().startsWith("slow-f") ? never : super.load(id);
			}

		};
		for (String id : List.of("f1", "f2", "f3", "g1")) {
			append(id, 0, id + "-1");
		}
		try (ProjectionEngine one = ProjectionEngine.builder(this.journal).readJournal(this.journal.readJournal())
			.offsetStore(slow)
			.threads(1)
			.build()) {
			one.fanOut("slow", String.class, (id) -> {
				if (id.startsWith("f")) {
					throw new IllegalStateException("no handler for " + id);
				}
				return EventHandler.blocking((event) -> this.seen.computeIfAbsent(event.persistenceId(),
						(k) -> new CopyOnWriteArrayList<>()).add(event.payload()));
			}, ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20)), DISCOVERY);
			// Bound: at once; a blocking read held the only thread 5 s per failed entity (15 s).
			await("the good entity handled while the failed ones' cursors are read").atMost(Duration.ofSeconds(3))
				.until(() -> this.seen.getOrDefault("g1", List.of()).size() == 1);
			ProjectionStatus failed = one.projection("slow-f1").orElseThrow().status();
			assertThat(failed.state()).isEqualTo(ProjectionState.FAILED);
			// "being read" while the never-answering read lasts; "could not be read" once its 5 s bound passed (a slow
			// machine): either says the cursor is not known, and neither is START's "from the start".
			assertThat(failed.lastError()).contains("no handler for f1").containsAnyOf("being read", "could not be read")
				.contains("not from the start");
		}
	}

	/**
	 * A start of a failed entity runs the user's factory; a stopAll meanwhile must not be followed by a runner that
	 * the retry registers and starts after stopAll returned.
	 */
	@Test
	void aRetryThatEndsAfterStopAllStartsNoRunner() throws Exception {
		ProjectionControl failed = fanOutFailingForE2(() -> new IllegalStateException("no handler for e2 today"));
		CountDownLatch release = new CountDownLatch(1);
		this.gate.set(release);
		this.failure.set(null);

		CompletableFuture<CompletionStage<Void>> retry = CompletableFuture.supplyAsync(failed::start);
		assertThat(this.entered.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the factory is running").isTrue();
		result(this.engine.stopAll());
		release.countDown();
		CompletableFuture<Void> started = retry.get(BOUND.toMillis(), TimeUnit.MILLISECONDS).toCompletableFuture();
		await("the retry ended").atMost(BOUND).until(started::isDone);

		assertThat(this.engine.projection("view-e2").orElseThrow().status().state())
			.as("no runner started after stopAll").isNotEqualTo(ProjectionState.RUNNING);
		assertThat(started).isCompletedExceptionally();
	}

}
