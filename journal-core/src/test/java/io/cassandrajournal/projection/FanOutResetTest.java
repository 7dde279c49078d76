package io.cassandrajournal.projection;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.ToIntFunction;

import org.jspecify.annotations.Nullable;

import com.datastax.oss.driver.api.core.CqlSession;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.inmemory.InMemoryDurableStateStore;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A reset of a shared fan-out's segment meets entities being added to it (docs/reliability.md, finding 29, items 10
 * to 12): by the segment's take, which adds the known entities one by one after publishing the segment; by
 * discovery while the reset runs, once and without end; and while the application's handler factory makes an
 * entity's handler; with a second reset open, in a paused segment and in a stopped one; and where the caller's
 * code after the reset runs. Each
 * entity's cursor was stored at the end of its events (an earlier term handled them), so an entity the reset
 * leaves out handles nothing, and one it rebuilds handles its two events again. The cursors are fenced under a
 * lease term over an in-memory durable state store (no Cassandra); a store call or the factory is held on a latch
 * to land each call in its window. Every wait is bounded ({@link #BOUND}).
 */
class FanOutResetTest {

	private static final Duration BOUND = Duration.ofSeconds(5);

	private static final SliceRange ALL = SliceRange.split(1).get(0);

	private static final ProjectionId SEGMENT = new ProjectionId("view", SharedFanOut.KEY).segment(ALL);

	private final ScheduledExecutorService executor = Executors.newScheduledThreadPool(2);

	private final ExecutorService callers = Executors.newCachedThreadPool();

	/** The engine's executor as the segments see it: a reset reports its outcome there. */
	private final ExecutorService completions = Executors.newSingleThreadExecutor(
			(task) -> new Thread(task, "reset-completions"));

	private final InMemoryDurableStateStore states = new InMemoryDurableStateStore();

	private final DurableStateOffsetStore offsets = new DurableStateOffsetStore(this.states);

	private final LeaseTerm term = new LeaseTerm(new Lease("view", ALL.key(), "me", 1, 1), System.nanoTime(),
			Duration.ofMinutes(1), System::nanoTime);

	private final HeldResets cursors = new HeldResets(new FencedCursor(this.offsets, this.term));

	private final Map<String, List<Long>> handled = new ConcurrentHashMap<>();

	/** Each entity's runner, as the segment made it. */
	private final Map<String, ProjectionRunner<String>> runners = new ConcurrentHashMap<>();

	/** The offsets each entity's runner read from (a start from its stored cursor, or from a reset's offset). */
	private final Map<String, List<TagOffset>> startedFrom = new ConcurrentHashMap<>();

	/** Released at the end of each test: whatever waits on it (a held factory) goes on. */
	private final CountDownLatch released = new CountDownLatch(1);

	/** The segments a test made: stopped after it. */
	private final List<SegmentRunner> made = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() {
		this.released.countDown();
		this.cursors.releaseAll();
		this.made.forEach(SegmentRunner::stop);
		this.callers.shutdownNow();
		this.completions.shutdownNow();
		this.executor.shutdownNow();
	}

	private static ProjectionId id(String entity) {
		return ProjectionId.byPersistenceId("view-" + entity, entity);
	}

	/** Each entity's cursor stored after its two events, as an earlier term left it. */
	private void storedAfterTheirEvents(String... entities) {
		DurableStateOffsetStore earlier = new DurableStateOffsetStore(this.states);
		for (String entity : entities) {
			result(earlier.save(id(entity), new TagOffset(2, "", 0)), BOUND);
		}
	}

	private List<Long> handled(String entity) {
		return this.handled.computeIfAbsent(entity, (k) -> new CopyOnWriteArrayList<>());
	}

	private List<TagOffset> startedFrom(String entity) {
		return this.startedFrom.computeIfAbsent(entity, (k) -> new CopyOnWriteArrayList<>());
	}

	/** The runner of an entity with two events, as the engine makes it under a segment's term. */
	private ProjectionRunner<String> runner(String entity, BooleanSupplier mayGoOn, OffsetStore cursor) {
		ScriptedSource.Log log = new ScriptedSource.Log(10).add(entity, 1).add(entity, 2);
		ProjectionRunner<String> runner = new ProjectionRunner<>(
				Projection.byTag("view-" + entity, TagFilter.tag("t"), String.class,
						ProjectionHandler.blocking((event) -> handled(entity).add(event.sequenceNr())),
						ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20))),
				id(entity), mayGoOn, (offset) -> {
					startedFrom(entity).add(offset);
					return log.from(offset);
				}, cursor, null, (letter) -> {
				}, new JacksonEventSerializer(), new ProjectionMetrics(new SimpleMeterRegistry(), "view-" + entity),
				RetryScheduler.REAL_TIME, this.executor, Clock.systemUTC());
		this.runners.put(entity, runner);
		return runner;
	}

	private FanOutSegment segment() {
		return segment((entity) -> runner(entity, this.term::valid, this.cursors));
	}

	private FanOutSegment segment(Function<String, @Nullable ProjectionRunner<?>> runnerFor) {
		return segment(runnerFor, this.offsets::peek);
	}

	private FanOutSegment segment(Function<String, @Nullable ProjectionRunner<?>> runnerFor,
			Function<ProjectionId, CompletionStage<java.util.Optional<TagOffset>>> storedCursors) {
		return made(new FanOutSegment(SEGMENT, runnerFor, storedCursors, this.completions));
	}

	private SharedFanOut fanOut(ToIntFunction<String> slices) {
		return new SharedFanOut("view", 1, this::runner, slices, context(), this.completions);
	}

	private ProjectionState state(String entity) {
		return this.runners.get(entity).status().state();
	}

	private <S extends SegmentRunner> S made(S segment) {
		this.made.add(segment);
		return segment;
	}

	private boolean rebuilt(String entity) {
		return handled(entity).equals(List.of(1L, 2L));
	}

	/**
	 * The take publishes the segment, then adds its known entities one by one: a reset in between (the operator's,
	 * while the lease thread takes the segment) listed only the entities added so far and completed, and the take
	 * then added the others with their old cursors: the operator asked to rebuild and some entities were not. Here
	 * the take is held between its two adds (in the slice lookup of its second entity), and the reset comes then.
	 */
	@Test
	void aResetDuringTheTakeRebuildsTheEntitiesTheTakeAddsAfterIt() throws Exception {
		storedAfterTheirEvents("a", "b");
		CountDownLatch between = new CountDownLatch(1);
		AtomicBoolean taking = new AtomicBoolean();
		AtomicInteger looked = new AtomicInteger();
		ToIntFunction<String> slices = (entity) -> {
			if (taking.get() && looked.incrementAndGet() == 2) {
				between.countDown();
				awaitQuietly(this.released);
			}
			return 0;
		};
		SharedFanOut fanOut = fanOut(slices);
		fanOut.discovered(List.of("a", "b"));
		taking.set(true);
		SegmentedProjection.Segment segment = fanOut.segments().get(0);
		Future<SegmentRunner> take = this.callers.submit(() -> fanOut.take(segment, this.term::valid, this.cursors));
		assertThat(between.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the take added its first entity")
			.isTrue();

		CompletableFuture<Void> reset = fanOut.reset(TagOffset.START).toCompletableFuture();
		this.released.countDown();
		made(take.get(BOUND.toMillis(), TimeUnit.MILLISECONDS));
		result(reset, BOUND);

		await("every entity of the segment rebuilt").atMost(BOUND).until(() -> rebuilt("a") && rebuilt("b"));
		assertThat(this.term.lost()).as("the term survived the reset").isFalse();
	}

	/**
	 * An entity discovered while the segment's reset runs (the reset's write of the first entity's cursor is held):
	 * it used to start from its old cursor, the reset completing without it. It is reset now (its reset is its
	 * start), and the segment's reset completes only once that entity's reset has.
	 */
	@Test
	void anEntityAddedWhileTheResetRunsIsRebuiltBeforeTheResetCompletes() throws Exception {
		storedAfterTheirEvents("a", "b");
		FanOutSegment segment = segment();
		segment.add("a");
		CompletableFuture<Void> releaseA = this.cursors.hold(id("a"));
		CompletableFuture<Void> releaseB = this.cursors.hold(id("b"));
		CompletableFuture<Void> reset = segment.reset(TagOffset.START).toCompletableFuture();
		assertThat(this.cursors.reached(id("a"))).as("the first entity's reset is held in its write").isTrue();

		segment.add("b");
		assertThat(this.cursors.reached(id("b"))).as("the entity added during the reset is reset").isTrue();
		releaseA.complete(null);
		await("the first entity rebuilt").atMost(BOUND).until(() -> rebuilt("a"));
		assertThat(reset).as("the reset waits for the added entity's reset").isNotDone();
		assertThat(handled("b")).as("nothing handled before its reset").isEmpty();

		releaseB.complete(null);
		result(reset, BOUND);
		await("the added entity rebuilt").atMost(BOUND).until(() -> rebuilt("b"));
		assertThat(this.term.lost()).as("the term survived the reset").isFalse();
	}

	/**
	 * The handler factory is the application's code and may be slow: it ran under the segment's lock, so the
	 * segment's status, its pause and its reset waited for it (with the lease loop, every control call of the
	 * fan-out). Now they answer while it runs; a second add of the same entity meanwhile makes no second runner, and
	 * the reset begun during the factory covers the entity once it is added.
	 */
	@Test
	void theHandlerFactoryRunsOutsideTheSegmentsLock() throws Exception {
		storedAfterTheirEvents("a", "b");
		CountDownLatch making = new CountDownLatch(1);
		AtomicInteger calls = new AtomicInteger();
		FanOutSegment segment = segment((entity) -> {
			calls.incrementAndGet();
			if (entity.equals("b")) {
				making.countDown();
				awaitQuietly(this.released);
			}
			return runner(entity, this.term::valid, this.cursors);
		});
		segment.add("a");
		Future<?> adding = this.callers.submit(() -> segment.add("b"));
		assertThat(making.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the factory runs for b").isTrue();

		assertThat(CompletableFuture.supplyAsync(segment::status, this.callers))
			.as("the segment's status while the factory runs").succeedsWithin(BOUND);
		assertThat(CompletableFuture.runAsync(segment::pause, this.callers))
			.as("the segment's pause while the factory runs").succeedsWithin(BOUND);
		segment.resume();
		CompletableFuture<CompletionStage<Void>> reset = CompletableFuture
			.supplyAsync(() -> segment.reset(TagOffset.START), this.callers);
		assertThat(reset).as("the segment's reset called while the factory runs").succeedsWithin(BOUND);
		assertThat(CompletableFuture.runAsync(() -> segment.add("b"), this.callers))
			.as("a second add of the entity while the factory runs").succeedsWithin(BOUND);

		this.released.countDown();
		adding.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
		result(reset.join(), BOUND);
		assertThat(calls.get()).as("one factory call per entity").isEqualTo(2);
		assertThat(segment.entities()).isEqualTo(2);
		await("both entities rebuilt").atMost(BOUND).until(() -> rebuilt("a") && rebuilt("b"));
		assertThat(this.term.lost()).as("the term survived the reset").isFalse();
	}

	/**
	 * The segment is retired (handed over, or its term ended) while an entity's factory runs and a reset waits for
	 * that entity: the runner made meanwhile was dropped, and the reset completed as if it had rebuilt the entity,
	 * whose cursor kept its old offset for the next owner. Now the runner is retired, never started, and the reset
	 * still writes its cursor under the term.
	 */
	@Test
	void aResetWaitingForAnEntityOfASegmentRetiredMeanwhileStillResetsItsCursor() throws Exception {
		storedAfterTheirEvents("a", "b");
		CountDownLatch making = new CountDownLatch(1);
		FanOutSegment segment = segment((entity) -> {
			if (entity.equals("b")) {
				making.countDown();
				awaitQuietly(this.released);
			}
			return runner(entity, this.term::valid, this.cursors);
		});
		segment.add("a");
		Future<?> adding = this.callers.submit(() -> segment.add("b"));
		assertThat(making.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the factory runs for b").isTrue();
		CompletableFuture<Void> reset = segment.reset(TagOffset.START).toCompletableFuture();

		result(segment.retire(), BOUND);
		this.released.countDown();
		adding.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
		result(reset, BOUND);

		assertThat(result(new DurableStateOffsetStore(this.states).load(id("b")), BOUND).orElse(TagOffset.START))
			.as("b's cursor reset (to the start) by the reset that waited for it").isEqualTo(TagOffset.START);
		assertThat(segment.entities()).as("nothing published on a retired segment").isEqualTo(1);
		assertThat(handled("b")).as("the retired segment's runner never started").isEmpty();
	}

	/**
	 * The take's adds fail part-way (here the slice lookup of its second entity) while a reset waits for them: the
	 * reset completed successfully with only the entities added so far. It now fails, saying some may be left out.
	 */
	@Test
	void aResetWaitingForATakeThatFailsPartWayDoesNotReportSuccess() throws Exception {
		storedAfterTheirEvents("a", "b");
		CountDownLatch between = new CountDownLatch(1);
		AtomicBoolean taking = new AtomicBoolean();
		AtomicInteger looked = new AtomicInteger();
		ToIntFunction<String> slices = (entity) -> {
			if (taking.get() && looked.incrementAndGet() == 2) {
				between.countDown();
				awaitQuietly(this.released);
				throw new IllegalStateException("the slice lookup failed");
			}
			return 0;
		};
		SharedFanOut fanOut = fanOut(slices);
		fanOut.discovered(List.of("a", "b"));
		taking.set(true);
		SegmentedProjection.Segment segment = fanOut.segments().get(0);
		Future<SegmentRunner> take = this.callers.submit(() -> fanOut.take(segment, this.term::valid, this.cursors));
		assertThat(between.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the take added its first entity")
			.isTrue();

		CompletableFuture<Void> reset = fanOut.reset(TagOffset.START).toCompletableFuture();
		this.released.countDown();
		assertThat(take).as("the take failed").failsWithin(BOUND);
		assertThat(reset).as("the reset that waited for the take").failsWithin(BOUND)
			.withThrowableThat()
			.withMessageContaining("failed before it added every entity");
	}

	/**
	 * An add whose failure handling itself fails with a fatal error (here reading the failed entity's stored
	 * cursor for its status) left the reset that waited for it held for the rest of the term: it never completed,
	 * and every later add became a rebuild. The add now releases what it held on every path.
	 */
	@Test
	void anAddThatFailsFatallyReleasesTheResetThatWaitedForIt() throws Exception {
		storedAfterTheirEvents("a");
		CountDownLatch making = new CountDownLatch(1);
		FanOutSegment segment = segment((entity) -> {
			if (entity.equals("b")) {
				making.countDown();
				awaitQuietly(this.released);
				throw new IllegalStateException("the application's factory failed");
			}
			return runner(entity, this.term::valid, this.cursors);
		}, (entity) -> {
			throw new InternalError("reading the stored cursor failed fatally");
		});
		segment.add("a");
		Future<?> adding = this.callers.submit(() -> segment.add("b"));
		assertThat(making.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the factory runs for b").isTrue();
		CompletableFuture<Void> reset = segment.reset(TagOffset.START).toCompletableFuture();

		this.released.countDown();
		assertThat(adding).as("the fatal error goes on up").failsWithin(BOUND);
		assertThat(reset).as("the reset that waited for the add").succeedsWithin(BOUND);
		await("a rebuilt").atMost(BOUND).until(() -> rebuilt("a"));
	}

	/**
	 * The reset's outcome reached its caller on whichever thread released its last hold: here the take's, as on
	 * the lease thread at the end of a take. A caller's dependent stage (not async) then ran on that thread, and one
	 * that waited for the lease thread (here: for the take to return) blocked it. It runs on the engine's executor
	 * now, and the take returns while it waits.
	 */
	@Test
	void theCallersCodeAfterTheResetRunsOnTheExecutorNotOnTheThreadThatEndedIt() throws Exception {
		storedAfterTheirEvents("a", "b");
		CountDownLatch between = new CountDownLatch(1);
		AtomicBoolean taking = new AtomicBoolean();
		AtomicInteger looked = new AtomicInteger();
		ToIntFunction<String> slices = (entity) -> {
			if (taking.get() && looked.incrementAndGet() == 2) {
				between.countDown();
				awaitQuietly(this.released);
			}
			return 0;
		};
		SharedFanOut fanOut = fanOut(slices);
		fanOut.discovered(List.of("a", "b"));
		taking.set(true);
		SegmentedProjection.Segment segment = fanOut.segments().get(0);
		Future<SegmentRunner> take = this.callers.submit(() -> fanOut.take(segment, this.term::valid, this.cursors));
		assertThat(between.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the take added its first entity")
			.isTrue();
		CompletableFuture<Void> reset = fanOut.reset(TagOffset.START).toCompletableFuture();
		AtomicReference<String> ranOn = new AtomicReference<>();
		CompletableFuture<Boolean> tookReturned = reset.thenApply((ignored) -> {
			ranOn.set(Thread.currentThread().getName());
			return returnsWithin(take, BOUND);
		});

		this.released.countDown();
		made(take.get(BOUND.multipliedBy(2).toMillis(), TimeUnit.MILLISECONDS));
		assertThat(tookReturned).as("the caller's stage that waits for the take").succeedsWithin(BOUND.multipliedBy(2))
			.isEqualTo(true);
		assertThat(ranOn.get()).as("where the caller's stage ran").isEqualTo("reset-completions");
		await("every entity of the segment rebuilt").atMost(BOUND).until(() -> rebuilt("a") && rebuilt("b"));
	}

	/**
	 * Steady discovery: each new entity arrives while the previous one's reset is still held. Every add that began
	 * before the reset ended joined it, so it stayed open for as long as entities kept arriving (here it never
	 * completed). An entity discovered while an entity the reset covers is still being reset joins it (e1 here);
	 * once those are reset none joins, and the reset completes without waiting for the later ones, which start from
	 * their stored cursors.
	 */
	@Test
	void aResetCompletesWhileEntitiesKeepBeingDiscovered() throws Exception {
		int most = 40;
		String[] entities = new String[most + 1];
		entities[0] = "a";
		for (int i = 1; i <= most; i++) {
			entities[i] = "e" + i;
		}
		storedAfterTheirEvents(entities);
		FanOutSegment segment = segment();
		segment.add("a");
		CompletableFuture<Void> releaseA = this.cursors.hold(id("a"));
		CompletableFuture<Void> reset = segment.reset(TagOffset.START).toCompletableFuture();
		assertThat(this.cursors.reached(id("a"))).as("the covered entity's reset is held in its write").isTrue();
		CompletableFuture<Void> previous = this.cursors.hold(id("e1"));
		segment.add("e1");
		assertThat(this.cursors.reached(id("e1"))).as("an entity discovered while a covered one is being reset joins")
			.isTrue();
		releaseA.complete(null);
		await("the covered entity rebuilt").atMost(BOUND).until(() -> rebuilt("a"));

		String last = "e1";
		int discovered = 1;
		while (!reset.isDone() && discovered < most) {
			String next = "e" + (++discovered);
			CompletableFuture<Void> release = this.cursors.hold(id(next));
			segment.add(next);
			await("the reset or the start of " + next).atMost(BOUND)
				.until(() -> this.cursors.reachedNow(id(next)) || !startedFrom(next).isEmpty());
			previous.complete(null);
			previous = release;
			last = next;
		}
		assertThat(reset).as("the reset, with entities discovered one after another (%d of them), the latest held",
				discovered).succeedsWithin(BOUND);
		await("the entity that joined rebuilt").atMost(BOUND).until(() -> rebuilt("e1"));
		assertThat(startedFrom(last)).as("an entity discovered after the covered ones were reset starts from its cursor")
			.containsExactly(new TagOffset(2, "", 0));
		assertThat(this.cursors.deletes(id(last))).as("and is not reset").isZero();
		assertThat(this.term.lost()).as("the term survived the reset").isFalse();
	}

	/**
	 * Two resets open when an entity's add ends: the first (which the add joined) resets it, the second (which began
	 * while the add was in flight, and so covers it) is refused by it as by the runner it listed; each completes,
	 * and nothing holds either afterwards (an entity added later starts from its cursor).
	 */
	@Test
	void twoOpenResetsMeetingALateEntityBothEnd() throws Exception {
		storedAfterTheirEvents("a", "b", "c");
		CountDownLatch making = new CountDownLatch(1);
		FanOutSegment segment = segment((entity) -> {
			if (entity.equals("b")) {
				making.countDown();
				awaitQuietly(this.released);
			}
			return runner(entity, this.term::valid, this.cursors);
		});
		segment.add("a");
		CompletableFuture<Void> releaseA = this.cursors.hold(id("a"));
		CompletableFuture<Void> first = segment.reset(TagOffset.START).toCompletableFuture();
		assertThat(this.cursors.reached(id("a"))).as("the first reset is held in a's write").isTrue();
		Future<?> adding = this.callers.submit(() -> segment.add("b"));
		assertThat(making.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the factory runs for b").isTrue();
		CompletableFuture<Void> second = segment.reset(TagOffset.START).toCompletableFuture();
		assertThat(second).as("the second reset waits for b's add").isNotDone();

		CompletableFuture<Void> releaseB = this.cursors.hold(id("b"));
		this.released.countDown();
		adding.get(BOUND.toMillis(), TimeUnit.MILLISECONDS);
		assertThat(this.cursors.reached(id("b"))).as("b reset by the first reset").isTrue();
		assertThat(second).as("the second reset, refused by a and b").failsWithin(BOUND)
			.withThrowableThat()
			.withCauseInstanceOf(ResetInProgressException.class);
		assertThat(first).as("the first reset waits for a and b").isNotDone();
		releaseA.complete(null);
		releaseB.complete(null);
		assertThat(first).as("the first reset").succeedsWithin(BOUND);
		await("a and b rebuilt").atMost(BOUND).until(() -> rebuilt("a") && rebuilt("b"));
		assertThat(this.cursors.deletes(id("b"))).as("b reset once").isEqualTo(1);

		segment.add("c");
		await("c started").atMost(BOUND).until(() -> !startedFrom("c").isEmpty());
		assertThat(startedFrom("c")).as("no reset open any more: c starts from its cursor")
			.containsExactly(new TagOffset(2, "", 0));
		assertThat(this.cursors.deletes(id("c"))).isZero();
		assertThat(this.term.lost()).as("the term survived the resets").isFalse();
	}

	/**
	 * An entity added to a paused segment while a reset runs is reset (its reset is its start) and stays paused:
	 * it handles nothing until the segment is resumed, then replays from the start.
	 */
	@Test
	void anEntityAddedToAPausedSegmentDuringAResetIsResetAndStaysPaused() throws Exception {
		storedAfterTheirEvents("a", "b");
		FanOutSegment segment = segment();
		segment.add("a");
		segment.pause();
		CompletableFuture<Void> releaseA = this.cursors.hold(id("a"));
		CompletableFuture<Void> reset = segment.reset(TagOffset.START).toCompletableFuture();
		assertThat(this.cursors.reached(id("a"))).as("the reset is held in a's write").isTrue();

		segment.add("b");
		releaseA.complete(null);
		result(reset, BOUND);
		assertThat(this.cursors.deletes(id("b"))).as("b reset by the reset it joined").isEqualTo(1);
		assertThat(state("a")).as("a after the reset").isEqualTo(ProjectionState.PAUSED);
		assertThat(state("b")).as("b after the reset").isEqualTo(ProjectionState.PAUSED);
		assertThat(handled("b")).as("b handled nothing while paused").isEmpty();
		assertThat(handled("a")).as("a handled nothing while paused").isEmpty();

		segment.resume();
		await("a and b replayed from the start once resumed").atMost(BOUND).until(() -> rebuilt("a") && rebuilt("b"));
	}

	/**
	 * An operator's stop of the segment, then a reset: the reset stored the start offset and started the listed
	 * entities' runners again, while the segment stayed stopped (adding no entity). It leaves them stopped now.
	 */
	@Test
	void aResetOfAStoppedSegmentLeavesItsEntitiesStopped() throws Exception {
		storedAfterTheirEvents("a");
		FanOutSegment segment = segment();
		segment.add("a");
		await("a started").atMost(BOUND).until(() -> !startedFrom("a").isEmpty());
		result(segment.stop(), BOUND);

		result(segment.reset(TagOffset.START), BOUND);
		assertThat(state("a")).as("a after the reset of the stopped segment").isEqualTo(ProjectionState.STOPPED);
		assertThat(result(new DurableStateOffsetStore(this.states).load(id("a")), BOUND).orElse(TagOffset.START))
			.as("a's cursor reset to the start").isEqualTo(TagOffset.START);
		assertThat(startedFrom("a")).as("a not started again").hasSize(1);
		assertThat(handled("a")).isEmpty();
	}

	/** @return whether the future completed within the bound (false, not an exception, when it did not) */
	private static boolean returnsWithin(Future<?> future, Duration bound) {
		try {
			future.get(bound.toMillis(), TimeUnit.MILLISECONDS);
			return true;
		}
		catch (TimeoutException ex) {
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
		catch (ExecutionException ex) {
			return true;
		}
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			latch.await(BOUND.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/** A sharing context whose lease loop never runs: the fan-out's take is called by the test. */
	private SegmentOwnership.Context context() {
		CqlSession unused = (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(),
				new Class<?>[] { CqlSession.class }, (proxy, method, args) -> switch (method.getName()) {
					case "toString" -> "no session";
					case "hashCode" -> System.identityHashCode(proxy);
					case "equals" -> proxy == args[0];
					default -> throw new UnsupportedOperationException(method.getName());
				});
		return new SegmentOwnership.Context(
				ProjectionSharing.create(unused, CassandraJournalOptions.create()).withInstanceId("me"), null, null,
				this.offsets, this.executor, this.executor, System::nanoTime, new AtomicBoolean());
	}

	/** The term's cursors, whose reset of a cursor held by the test waits until released. */
	private static final class HeldResets extends DelegatingOffsetStore {

		private final Map<ProjectionId, CompletableFuture<Void>> held = new ConcurrentHashMap<>();

		private final Map<ProjectionId, CountDownLatch> reached = new ConcurrentHashMap<>();

		private final Map<ProjectionId, AtomicInteger> deletes = new ConcurrentHashMap<>();

		HeldResets(OffsetStore delegate) {
			super(delegate);
		}

		/** @return completing it lets the reset of the cursor write */
		CompletableFuture<Void> hold(ProjectionId id) {
			this.reached.put(id, new CountDownLatch(1));
			return this.held.computeIfAbsent(id, (k) -> new CompletableFuture<>());
		}

		/** @return whether the reset of a held cursor reached its write (waits for it, bounded) */
		boolean reached(ProjectionId id) throws InterruptedException {
			return this.reached.get(id).await(BOUND.toMillis(), TimeUnit.MILLISECONDS);
		}

		/** @return whether the reset of a held cursor reached its write by now */
		boolean reachedNow(ProjectionId id) {
			return this.reached.get(id).getCount() == 0;
		}

		/** @return how many resets to the start wrote the cursor (or were held in the write) */
		int deletes(ProjectionId id) {
			AtomicInteger count = this.deletes.get(id);
			return (count != null) ? count.get() : 0;
		}

		void releaseAll() {
			this.held.values().forEach((release) -> release.complete(null));
		}

		/** A reset to the start is a delete (the interface's reset): fenced and written by the term's cursor. */
		@Override
		public CompletionStage<Void> delete(ProjectionId id) {
			this.deletes.computeIfAbsent(id, (k) -> new AtomicInteger()).incrementAndGet();
			CompletableFuture<Void> release = this.held.get(id);
			if (release == null) {
				return super.delete(id);
			}
			this.reached.get(id).countDown();
			return release.thenComposeAsync((ignored) -> super.delete(id));
		}

	}

}
