package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.inmemory.InMemoryDurableStateStore;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateStore;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A reset of a runner whose cursor is fenced by a lease term (a shared fan-out's entity), when the reset meets the
 * runner's start: before the start was called, or while the start's fence is being sent. Either way the reset used
 * to write the cursor before any fence, which the offset store refuses, and that refusal ended the whole term: in
 * a fan-out every other entity's reset then failed as "lapsed or was lost" (docs/reliability.md, finding 29; seen
 * as a flake of {@code SharedFanOutTermsIT} in two full builds). No Cassandra: an in-memory durable state store.
 * Every wait is bounded ({@link #BOUND}).
 */
class FencedResetTest {

	private static final Duration BOUND = Duration.ofSeconds(5);

	private final ScheduledExecutorService executor = Executors.newScheduledThreadPool(2);

	private final ExecutorService starter = Executors.newSingleThreadExecutor();

	private final BlockingReads store = new BlockingReads(new InMemoryDurableStateStore());

	private final DurableStateOffsetStore offsets = new DurableStateOffsetStore(this.store);

	private final LeaseTerm term = new LeaseTerm(new Lease("view", "0-1023", "me", 1, 1), System.nanoTime(),
			Duration.ofMinutes(1), System::nanoTime);

	private final List<Long> handled = new CopyOnWriteArrayList<>();

	private final ScriptedSource.Log log = new ScriptedSource.Log(10).add("a", 1).add("a", 2);

	private final ProjectionRunner<String> runner = new ProjectionRunner<>(
			Projection.byTag("view", TagFilter.tag("t"), String.class,
					ProjectionHandler.blocking((event) -> this.handled.add(event.sequenceNr())),
					ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20))),
			new ProjectionId("view", "a"), this.term::valid, this.log::from, new FencedCursor(this.offsets, this.term),
			null, (letter) -> {
			}, new JacksonEventSerializer(), new ProjectionMetrics(new SimpleMeterRegistry(), "view"),
			RetryScheduler.REAL_TIME, this.executor, Clock.systemUTC());

	@AfterEach
	void close() {
		this.store.release();
		this.runner.stop();
		this.starter.shutdownNow();
		this.executor.shutdownNow();
	}

	/**
	 * The start's fence is on its way (its read blocks the starting thread, as a driver call can before it hands
	 * over) when the reset comes: the reset must wait for that fence, whatever the interleaving. It used to see the
	 * previous start's (ended) load, write before the fence, and end the term.
	 */
	@Test
	void aResetDuringTheStartsFenceWaitsForIt() throws Exception {
		CountDownLatch reading = this.store.blockNextRead();
		this.starter.submit(this.runner::start);
		assertThat(reading.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the start's fence is reading").isTrue();

		CompletionStage<Void> reset = this.runner.reset(TagOffset.START);
		assertThat(reset.toCompletableFuture().isDone()).as("the reset waits for the fence").isFalse();
		this.store.release();

		result(reset, BOUND);
		assertThat(this.term.lost()).as("the term survived the reset").isFalse();
		await("both events handled after the reset").atMost(BOUND).until(() -> this.handled.size() >= 2);
		assertThat(this.handled).containsExactly(1L, 2L);
	}

	/**
	 * The reset reaches the runner before its start was called (a fan-out lists the runner while another thread is
	 * adding it): the reset fences the cursor itself, and the start then waits for the reset.
	 */
	@Test
	void aResetBeforeTheStartFencesTheCursorFirst() {
		CompletionStage<Void> reset = this.runner.reset(TagOffset.START);
		this.runner.start();

		result(reset, BOUND);
		assertThat(this.term.lost()).as("the term survived the reset").isFalse();
		await("both events handled after the reset").atMost(BOUND).until(() -> this.handled.size() >= 2);
		assertThat(this.handled).containsExactly(1L, 2L);
		DurableStateOffsetStore.Cursor stored = result(this.store.get(DurableStateOffsetStore.key(this.runner.id()),
				DurableStateOffsetStore.StoredCursor.class)).orElseThrow().value().cursor();
		assertThat(stored.epoch()).as("the cursor is written under the term's epoch").isEqualTo(1);
	}

	/**
	 * The store's cache of a cursor's revision outlives lease terms. Here this instance fenced the cursor under
	 * epoch 1, another owner then fenced and wrote it under epoch 2, and this instance holds epoch 3 now: a reset
	 * under epoch 3 that trusted the cache wrote on epoch 1's revision without a fence, met a conflict and ended
	 * the term it validly holds.
	 */
	@Test
	void aResetUnderANewTermFencesEvenWhenAnEarlierTermsRevisionIsCached() {
		ProjectionId id = new ProjectionId("view", "a");
		result(new FencedCursor(this.offsets, term(1)).load(id), BOUND);
		DurableStateOffsetStore other = new DurableStateOffsetStore(this.store);
		result(other.fence(id, TagOffset.START, 2, "0-1023"), BOUND);
		result(other.save(id, new TagOffset(5, "a", 1), 2, "0-1023"), BOUND);

		LeaseTerm third = term(3);
		result(new FencedCursor(this.offsets, third).reset(id, TagOffset.START), BOUND);

		assertThat(third.lost()).as("the term survived the reset").isFalse();
		DurableStateOffsetStore.Cursor stored = result(this.store.get(DurableStateOffsetStore.key(id),
				DurableStateOffsetStore.StoredCursor.class)).orElseThrow().value().cursor();
		assertThat(stored.epoch()).as("the reset wrote under the new term's epoch").isEqualTo(3);
		assertThat(stored.offset()).isEqualTo(TagOffset.START);
	}

	/**
	 * The start's first load fails (the store is unavailable for a moment), so it is scheduled again after the poll
	 * interval; a reset meanwhile stops that start. The stopped start's load must never be sent: it is a fence,
	 * and sent late it races the reset's cursor write. Reads are counted: the reset's fence and the new start's
	 * fence, each one read, after the failed one; the count is watched for three poll intervals after the reset.
	 */
	@Test
	void aResetAfterAFailedFenceReadIsNotRacedByTheStartsRetry() {
		ProjectionRunner<String> slow = new ProjectionRunner<>(
				Projection.byTag("view", TagFilter.tag("t"), String.class,
						ProjectionHandler.blocking((event) -> this.handled.add(event.sequenceNr())),
						ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(300))),
				new ProjectionId("view", "a"), this.term::valid, this.log::from,
				new FencedCursor(this.offsets, this.term), null, (letter) -> {
				}, new JacksonEventSerializer(), new ProjectionMetrics(new SimpleMeterRegistry(), "view"),
				RetryScheduler.REAL_TIME, this.executor, Clock.systemUTC());
		try {
			this.store.failNextRead();
			result(slow.start(), BOUND);
			assertThat(this.store.reads()).as("the start's load failed once").isEqualTo(1);

			result(slow.reset(TagOffset.START), BOUND);
			await("both events handled after the reset").atMost(BOUND).until(() -> this.handled.size() >= 2);
			await("no stale load is sent").during(Duration.ofMillis(900))
				.atMost(Duration.ofSeconds(2))
				.until(() -> this.store.reads() == 3);
			assertThat(this.term.lost()).as("the term survived the reset").isFalse();
		}
		finally {
			slow.stop();
		}
	}

	private static LeaseTerm term(long epoch) {
		return new LeaseTerm(new Lease("view", "0-1023", "me", epoch, 1), System.nanoTime(), Duration.ofMinutes(1),
				System::nanoTime);
	}

	/** Blocks the calling thread on the next read until released, as a driver call can before it hands over. */
	private static final class BlockingReads implements DurableStateStore {

		private final DurableStateStore delegate;

		private volatile CountDownLatch reading;

		private final CountDownLatch released = new CountDownLatch(1);

		private final AtomicInteger reads = new AtomicInteger();

		private volatile boolean failNext;

		BlockingReads(DurableStateStore delegate) {
			this.delegate = delegate;
		}

		CountDownLatch blockNextRead() {
			this.reading = new CountDownLatch(1);
			return this.reading;
		}

		void failNextRead() {
			this.failNext = true;
		}

		int reads() {
			return this.reads.get();
		}

		void release() {
			this.released.countDown();
		}

		@Override
		public <S> CompletionStage<Optional<DurableState<S>>> get(String persistenceId, Class<S> type) {
			this.reads.incrementAndGet();
			if (this.failNext) {
				this.failNext = false;
				return CompletableFuture.failedFuture(new JournalUnavailableException("no node answered (test)",
						new IllegalStateException("unavailable")));
			}
			CountDownLatch blocked = this.reading;
			if (blocked != null) {
				this.reading = null;
				blocked.countDown();
				try {
					if (!this.released.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)) {
						return CompletableFuture.failedFuture(new IllegalStateException("never released"));
					}
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					return CompletableFuture.failedFuture(ex);
				}
			}
			return this.delegate.get(persistenceId, type);
		}

		@Override
		public CompletionStage<Void> upsert(String persistenceId, long revision, Object value) {
			return this.delegate.upsert(persistenceId, revision, value);
		}

		@Override
		public CompletionStage<Void> delete(String persistenceId, long revision) {
			return this.delegate.delete(persistenceId, revision);
		}

	}

}
