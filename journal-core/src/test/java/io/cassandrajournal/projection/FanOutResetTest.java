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
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.ToIntFunction;

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
 * and 11): by the segment's take, which adds the known entities one by one after publishing the segment; by
 * discovery while the reset runs; and while the application's handler factory makes an entity's handler. Each
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

	private final InMemoryDurableStateStore states = new InMemoryDurableStateStore();

	private final DurableStateOffsetStore offsets = new DurableStateOffsetStore(this.states);

	private final LeaseTerm term = new LeaseTerm(new Lease("view", ALL.key(), "me", 1, 1), System.nanoTime(),
			Duration.ofMinutes(1), System::nanoTime);

	private final HeldResets cursors = new HeldResets(new FencedCursor(this.offsets, this.term));

	private final Map<String, List<Long>> handled = new ConcurrentHashMap<>();

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

	/** The runner of an entity with two events, as the engine makes it under a segment's term. */
	private ProjectionRunner<String> runner(String entity, BooleanSupplier mayGoOn, OffsetStore cursor) {
		ScriptedSource.Log log = new ScriptedSource.Log(10).add(entity, 1).add(entity, 2);
		return new ProjectionRunner<>(
				Projection.byTag("view-" + entity, TagFilter.tag("t"), String.class,
						ProjectionHandler.blocking((event) -> handled(entity).add(event.sequenceNr())),
						ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20))),
				id(entity), mayGoOn, log::from, cursor, null, (letter) -> {
				}, new JacksonEventSerializer(), new ProjectionMetrics(new SimpleMeterRegistry(), "view-" + entity),
				RetryScheduler.REAL_TIME, this.executor, Clock.systemUTC());
	}

	private FanOutSegment segment() {
		return made(new FanOutSegment(SEGMENT, (entity) -> runner(entity, this.term::valid, this.cursors),
				this.offsets::peek));
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
		SharedFanOut fanOut = new SharedFanOut("view", 1, this::runner, slices, context());
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
		FanOutSegment segment = made(new FanOutSegment(SEGMENT, (entity) -> {
			calls.incrementAndGet();
			if (entity.equals("b")) {
				making.countDown();
				awaitQuietly(this.released);
			}
			return runner(entity, this.term::valid, this.cursors);
		}, this.offsets::peek));
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
		FanOutSegment segment = made(new FanOutSegment(SEGMENT, (entity) -> {
			if (entity.equals("b")) {
				making.countDown();
				awaitQuietly(this.released);
			}
			return runner(entity, this.term::valid, this.cursors);
		}, this.offsets::peek));
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
		SharedFanOut fanOut = new SharedFanOut("view", 1, this::runner, slices, context());
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
		FanOutSegment segment = made(new FanOutSegment(SEGMENT, (entity) -> {
			if (entity.equals("b")) {
				making.countDown();
				awaitQuietly(this.released);
				throw new IllegalStateException("the application's factory failed");
			}
			return runner(entity, this.term::valid, this.cursors);
		}, (entity) -> {
			throw new InternalError("reading the stored cursor failed fatally");
		}));
		segment.add("a");
		Future<?> adding = this.callers.submit(() -> segment.add("b"));
		assertThat(making.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the factory runs for b").isTrue();
		CompletableFuture<Void> reset = segment.reset(TagOffset.START).toCompletableFuture();

		this.released.countDown();
		assertThat(adding).as("the fatal error goes on up").failsWithin(BOUND);
		assertThat(reset).as("the reset that waited for the add").succeedsWithin(BOUND);
		await("a rebuilt").atMost(BOUND).until(() -> rebuilt("a"));
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

		void releaseAll() {
			this.held.values().forEach((release) -> release.complete(null));
		}

		/** A reset to the start is a delete (the interface's reset): fenced and written by the term's cursor. */
		@Override
		public CompletionStage<Void> delete(ProjectionId id) {
			CompletableFuture<Void> release = this.held.get(id);
			if (release == null) {
				return super.delete(id);
			}
			this.reached.get(id).countDown();
			return release.thenComposeAsync((ignored) -> super.delete(id));
		}

	}

}
