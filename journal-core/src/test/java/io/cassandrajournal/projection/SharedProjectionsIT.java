package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.state.DurableStateConflictException;
import io.cassandrajournal.state.DurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Several engines (instances) in one JVM share a projection of 8 segments on a real node, under continuous
 * appends: they spread the segments, a graceful stop hands its segments over at once, a frozen instance (no
 * renewals, handlers blocked, and on waking a clock that did not count the pause) is taken over within the lease
 * timeout and cannot move any cursor when it wakes. Every cursor write is recorded: per cursor, the stored epoch
 * and offset never go backwards. The read model equals the fold of the journal; events handled twice are
 * counted, printed and bounded.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SharedProjectionsIT {

	private static final Duration LEASE_TIMEOUT = SharedProjectionFixture.LEASE_TIMEOUT;

	private static final int SEGMENTS = 8;

	private static final int PAGE_SIZE = 20;

	/**
	 * The tag feed's backtrack window: a new owner resumes from the stored (swept) offset, so it re-delivers the
	 * events of this window as well as the batch its predecessor had in hand. One writer on one node needs little
	 * (the default is 10 s); 1 s keeps that re-delivery below a batch here (about 100 appends a second over 8
	 * segments).
	 */
	private static final Duration BACKTRACK = Duration.ofSeconds(1);

	private static final String PROJECTION = "balances";

	private SharedProjectionFixture shared;

	private CassandraJournal journal;

	/** Every cursor write any instance attempted, in the order they completed. */
	private final List<Write> writes = new CopyOnWriteArrayList<>();

	private volatile Model model = new Model();

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.shared = new SharedProjectionFixture(keyspace);
		this.journal = this.shared.journal;
	}

	/**
	 * Runs the scenario {@code -Dshared.repetitions=N} times in a row (default once), each with a new tag (so new
	 * cursors), a fresh read model and record of writes; the lease rows are reused (released by each run's stop).
	 */
	@Test
	void instancesShareSegmentsHandOverOnStopTakeOverAFrozenOneAndTheFrozenOneCannotMoveACursor() throws Exception {
		int repetitions = Integer.getInteger("shared.repetitions", 1);
		for (int run = 1; run <= repetitions; run++) {
			this.writes.clear();
			this.model = new Model();
			System.out.printf("Run %d of %d%n", run, repetitions);
			runOnce();
		}
	}

	private void runOnce() throws Exception {
		String tag = "shared-" + System.nanoTime();
		Instance a = new Instance("a", tag);
		Instance b = new Instance("b", tag);
		Instance c = new Instance("c", tag);
		Appender appender = new Appender(tag, 40);
		Thread appending = new Thread(appender::run, "appender");
		appending.start();
		try {
			a.engine.startAll();
			b.engine.startAll();
			c.engine.startAll();
			Map<String, String> expected = Rendezvous.assign(PROJECTION, segmentKeys(), List.of("a", "b", "c"));
			System.out.println("Segment owners by rendezvous: " + expected);
			// Bound: members count as live after their second beat (~2 renewals), then each takes or hands over on
			// its next renewal: well within 20 s.
			await("each segment owned by its rendezvous winner").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100)).until(() -> owners().equals(expected));
			await("progress").atMost(Duration.ofSeconds(20)).until(() -> this.model.handled() > 100);

			// Graceful stop of a: its segments are released and taken at once, well before the lease timeout.
			long stopped = System.nanoTime();
			result(a.engine.stopAll());
			await("a's segments taken by b and c").atMost(LEASE_TIMEOUT).pollInterval(Duration.ofMillis(50))
				.until(() -> owners().values().stream().noneMatch("a"::equals) && owners().size() == SEGMENTS);
			System.out.printf("Graceful hand-over of a's segments took %d ms%n",
					Duration.ofNanos(System.nanoTime() - stopped).toMillis());

			// c freezes: handlers blocked, then, once one of them holds a batch (so the takeover below meets an
			// owner with a batch in hand, the case it is about), no renewals, no beats (a paused JVM).
			c.blockHandlers();
			// Bound: c runs about half the segments; about 100 appends a second reach one of them within a poll.
			await("a handler of c holds a batch").atMost(Duration.ofSeconds(10)).until(() -> c.holding.get() > 0);
			c.engine.freezeLeases(true);
			long frozen = System.nanoTime();
			System.out.printf("c frozen with %d handler call(s) holding a batch%n", c.holding.get());
			// Bound: b watches c's member beat and lease rows all along; both stay unchanged for the lease timeout,
			// then b takes on its next renewal: the timeout plus a few renewal intervals; twice the timeout.
			await("b takes c's segments").atMost(LEASE_TIMEOUT.multipliedBy(2)).pollInterval(Duration.ofMillis(50))
				.until(() -> owners().values().stream().allMatch("b"::equals) && owners().size() == SEGMENTS);
			System.out.printf("Takeover of frozen c's segments took %d ms (lease timeout %d ms)%n",
					Duration.ofNanos(System.nanoTime() - frozen).toMillis(), LEASE_TIMEOUT.toMillis());
			long appended = appender.appended();
			await("b caught up past c's batches").atMost(Duration.ofSeconds(30)).until(() -> this.model.handled() >= appended);

			// c wakes with a clock that did not count the pause: its terms look valid to it, so its runners go on
			// and try to save; Cassandra refuses (fenced), and the refusal ends the term.
			int refusedBefore = refused("c");
			c.thawHandlers(Duration.ofNanos(System.nanoTime() - frozen));
			await("c's stale cursor save is refused").atMost(Duration.ofSeconds(20)).until(() -> refused("c") > refusedBefore);
			c.engine.freezeLeases(false);
			// Bound: c renews (refused), drops, beats again; b hands over c's share on its next renewals.
			await("c gets its share back").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
				.until(() -> owners().equals(Rendezvous.assign(PROJECTION, segmentKeys(), List.of("b", "c"))));
		}
		finally {
			appender.stop();
			appending.join(30_000);
		}
		// Bound: the instances catch up with the last appends within a few polls.
		await("read model equals the journal").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
			.until(() -> this.model.matches(appender.expected()));
		result(b.engine.stopAll());
		result(c.engine.stopAll());
		a.engine.close();
		b.engine.close();
		c.engine.close();

		assertThat(this.model.outOfOrder.get()).as("only a stale owner's events arrive ahead of the owner's").isLessThanOrEqualTo(2L * PAGE_SIZE * SEGMENTS);
		assertCursorsNeverMovedBackOrToAnOlderEpoch();
		long takeovers = this.writes.stream().filter(Write::applied).collect(Collectors.groupingBy(Write::key,
				Collectors.mapping(Write::epoch, Collectors.toSet()))).values().stream().mapToLong((e) -> e.size() - 1).sum();
		System.out.printf("Events: %d appended, %d handled, %d handled twice, %d owner changes, %d refused cursor writes "
				+ "(%d by woken c)%n", appender.appended(), this.model.handled(), this.model.duplicates.get(), takeovers,
				this.writes.stream().filter((w) -> !w.applied()).count(), refused("c"));
		// A new owner re-handles the batch its predecessor had not saved plus the feed's backtrack window (under a
		// batch here, see BACKTRACK); a woken stale owner finishes at most the batch in hand: two batches per change
		// of owner at most.
		assertThat(this.model.duplicates.get()).isLessThanOrEqualTo(2L * PAGE_SIZE * Math.max(1, takeovers));
	}

	private void assertCursorsNeverMovedBackOrToAnOlderEpoch() {
		Map<String, List<Write>> byKey = this.writes.stream().filter(Write::applied)
			.collect(Collectors.groupingBy(Write::key));
		assertThat(byKey).hasSizeGreaterThanOrEqualTo(SEGMENTS);
		byKey.forEach((key, applied) -> {
			List<Write> ordered = applied.stream().sorted(Comparator.comparingLong(Write::revision)).toList();
			for (int i = 1; i < ordered.size(); i++) {
				Write before = ordered.get(i - 1);
				Write after = ordered.get(i);
				assertThat(after.epoch()).as("%s: %s after %s", key, after, before).isGreaterThanOrEqualTo(before.epoch());
				assertThat(after.offset()).as("%s: %s after %s", key, after, before).isGreaterThanOrEqualTo(before.offset());
			}
		});
	}

	private int refused(String instance) {
		return (int) this.writes.stream().filter((w) -> w.instance().equals(instance) && !w.applied()).count();
	}

	private static List<String> segmentKeys() {
		return SharedProjectionFixture.segmentKeys(SEGMENTS);
	}

	/** @return each held segment's owner, from the lease rows */
	private Map<String, String> owners() {
		return this.shared.owners(PROJECTION, SEGMENTS);
	}

	/** One cursor write: who, which key and revision, the cursor and epoch, and whether Cassandra applied it. */
	record Write(String instance, String key, long revision, TagOffset offset, long epoch, boolean applied) {
	}

	/** One engine with its own offset store, lease thread, clock and threads. */
	private final class Instance {

		final ProjectionEngine engine;

		final AtomicLong unCounted = new AtomicLong();

		volatile CountDownLatch paused = new CountDownLatch(0);

		/** Handler calls that found the handlers blocked and wait, each holding its runner's batch. */
		final AtomicInteger holding = new AtomicInteger();

		Instance(String id, String tag) {
			DurableStateStore recording = new CursorWrites(SharedProjectionsIT.this.shared.state,
					(key, revision, offset, epoch, error) -> {
						if (error == null || Errors.unwrap(error) instanceof DurableStateConflictException) {
							SharedProjectionsIT.this.writes.add(new Write(id, key, revision, offset, epoch, error == null));
						}
					});
			this.engine = SharedProjectionsIT.this.shared.engine(id, recording)
				.nanoClock(() -> System.nanoTime() - this.unCounted.get())
				.build();
			this.engine.register(Projection.byTag(PROJECTION, TagFilter.tag(tag), AccountEvent.class,
					EventHandler.blocking((event) -> {
						CountDownLatch latch = this.paused;
						if (latch.getCount() > 0) {
							this.holding.incrementAndGet();
						}
						latch.await();
						SharedProjectionsIT.this.model.apply(event);
					}),
					ProjectionSettings.defaults().withSegments(SEGMENTS).withPollInterval(Duration.ofMillis(100))
						.withFeed(new FeedSettings(Duration.ZERO, BACKTRACK, PAGE_SIZE))));
		}

		/** Handlers block on their next event, holding their batch, until {@link #thawHandlers}. */
		void blockHandlers() {
			this.paused = new CountDownLatch(1);
		}

		/** Wakes the handlers; the clock skips the pause, as a suspended machine's monotonic clock may. */
		void thawHandlers(Duration pause) {
			this.unCounted.addAndGet(pause.toNanos());
			this.paused.countDown();
		}

	}

	/** The read model: per entity the last sequence number applied and the balance; idempotent by sequence number. */
	static final class Model {

		private final Map<String, long[]> accounts = new ConcurrentHashMap<>();

		final AtomicLong duplicates = new AtomicLong();

		final AtomicLong outOfOrder = new AtomicLong();

		private final AtomicLong handled = new AtomicLong();

		synchronized void apply(PersistentEvent<AccountEvent> event) {
			long[] account = this.accounts.computeIfAbsent(event.persistenceId(), (pid) -> new long[2]);
			if (event.sequenceNr() <= account[0]) {
				this.duplicates.incrementAndGet();
				return;
			}
			if (event.sequenceNr() != account[0] + 1) {
				// A stale owner's event ahead of the current owner's: the owner delivers it in order later.
				this.outOfOrder.incrementAndGet();
				return;
			}
			account[0] = event.sequenceNr();
			account[1] += ((Deposited) event.payload()).amount();
			this.handled.incrementAndGet();
		}

		long handled() {
			return this.handled.get();
		}

		synchronized boolean matches(Map<String, long[]> expected) {
			return expected.entrySet().stream().allMatch((e) -> {
				long[] account = this.accounts.get(e.getKey());
				return account != null && account[0] == e.getValue()[0] && account[1] == e.getValue()[1];
			});
		}

	}

	/** Appends one event at a time, round robin over its entities, until stopped; keeps the fold of the journal. */
	private final class Appender {

		private final String tag;

		private final List<String> ids = new ArrayList<>();

		private final Map<String, long[]> expected = new ConcurrentHashMap<>();

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final AtomicLong appended = new AtomicLong();

		Appender(String tag, int entities) {
			this.tag = tag;
			for (int i = 0; i < entities; i++) {
				this.ids.add(tag + "-account-" + i);
			}
		}

		void run() {
			int next = 0;
			while (this.running.get()) {
				String id = this.ids.get(next++ % this.ids.size());
				long[] account = this.expected.computeIfAbsent(id, (pid) -> new long[2]);
				long amount = 1 + (next % 7);
				result(SharedProjectionsIT.this.journal.append(id, account[0],
						List.of(EventToAppend.of(new Deposited(amount), this.tag))));
				account[0]++;
				account[1] += amount;
				this.appended.incrementAndGet();
				// Pacing of the load (about 100 appends a second), not a wait for a condition.
				LockSupport.parkNanos(Duration.ofMillis(10).toNanos());
			}
		}

		void stop() {
			this.running.set(false);
		}

		long appended() {
			return this.appended.get();
		}

		Map<String, long[]> expected() {
			return this.expected;
		}

	}

}
