package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.state.DurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.FaultInjectingSession.cqlContains;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sharing path of docs/reliability.md, finding 29, item 9, on a real node: an operator's reset reaches a
 * shared segment's runner after the hand-over of the segment to another instance has stopped (retired) it, and
 * before the hand-over has cleared it and released the lease. Instance a runs the projection's one segment; b
 * joins and wins it by rendezvous, so a hands it over: a's runner is retired and waits for the batch in hand (a's
 * handler is held on an event). Then a's lease thread is held (the answer of its lease-row read waits,
 * {@link FaultInjectingSession#answerAfter}), so the release queued after the batch cannot end a's term yet, and
 * the reset is sent to a. Once the handler is let go, the batch ends and the reset writes its cursor under a's
 * still valid term. Checked: the reset reports success only for a cursor written under a's epoch; a's runner is
 * never started again by the reset (it stays STOPPED and a handles no event twice, watched while its term is still
 * valid); once the lease thread goes on, b takes the segment, fences the reset's cursor under the next epoch and
 * handles every event from there (at least once, none lost), and then the events appended after.
 * <p>
 * Deterministic: every step waits for a condition (bounds stated where they are), and the order of the hand-over's
 * stop, the reset, the cursor write and the release is forced by the held handler and the held lease thread.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SharedResetHandOverIT {

	private static final Duration LEASE_TIMEOUT = SharedProjectionFixture.LEASE_TIMEOUT;

	private static final int ENTITIES = 4;

	private static final int EVENTS_EACH = 3;

	private SharedProjectionFixture shared;

	private FaultInjectingSession faults;

	private final List<ProjectionEngine> engines = new ArrayList<>();

	/** Lets every held step go (a's handler, a's lease thread), so that a failed test does not leave them held. */
	private final List<Runnable> releases = new CopyOnWriteArrayList<>();

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.shared = new SharedProjectionFixture(keyspace);
		this.faults = new FaultInjectingSession(keyspace.session());
	}

	@AfterEach
	void close() {
		this.releases.forEach(Runnable::run);
		this.faults.heal();
		this.engines.forEach(ProjectionEngine::close);
		this.engines.clear();
	}

	@Test
	void aResetThatReachesARunnerHandedOverWritesUnderItsTermNeverRestartsItAndTheNextOwnerStartsFromIt() {
		String tag = "reset-handover-" + System.nanoTime();
		String name = projectionWonBy("b", tag);
		String segmentKey = SharedProjectionFixture.segmentKeys(1).get(0);
		List<Write> writes = new CopyOnWriteArrayList<>();

		Instance a = new Instance("a", name, tag, this.faults.session(), writes);
		CountDownLatch heldEvent = new CountDownLatch(1);
		CountDownLatch letGo = new CountDownLatch(1);
		this.releases.add(letGo::countDown);
		result(a.engine.startAll());
		// Bound: a counts itself live and takes the free segment on its first rounds.
		await("a runs the segment").atMost(Duration.ofSeconds(20))
			.until(() -> a.segment().term != null && running(a.segment().runner));
		Appended appended = new Appended(tag);
		appended.append(ENTITIES * EVENTS_EACH);
		// Bound: a few polls of 100 ms.
		await("a handled every event").atMost(Duration.ofSeconds(20)).until(() -> a.handledAll(appended.all()));
		long epoch = a.term().epoch();
		ProjectionRunner<?> aRunner = (ProjectionRunner<?>) a.segment().runner;

		// a's next batch is held in its handler.
		a.holdNext(heldEvent, letGo);
		appended.append(1);
		await("a's handler holds a batch").atMost(Duration.ofSeconds(20))
			.until(() -> heldEvent.await(0, TimeUnit.MILLISECONDS));

		// b joins and wins the segment: a hands it over, its runner retired, waiting for the batch in hand.
		Instance b = new Instance("b", name, tag, this.shared.keyspace.session(), writes);
		result(b.engine.startAll());
		// Bound: b counts as live for a after its beat changed once (about two renewals), a hands over on its next
		// round.
		await("a's hand-over stopped its runner").atMost(Duration.ofSeconds(20))
			.until(() -> aRunner.status().state() == ProjectionState.STOPPED);
		assertThat(a.segment().runner).as("the hand-over clears the runner only after the batch in hand")
			.isSameAs(aRunner);

		// a's lease thread is held in its next round's read of the lease rows, so the release that the hand-over
		// queues once the batch ends waits: a's term stays valid (renewals have a thread of their own).
		CountDownLatch leaseThreadHeld = new CountDownLatch(1);
		CompletableFuture<Void> leaseThreadGoesOn = new CompletableFuture<>();
		this.releases.add(() -> leaseThreadGoesOn.complete(null));
		this.faults.answerAfter(cqlContains("segment IN"), 0, () -> {
			leaseThreadHeld.countDown();
			return leaseThreadGoesOn;
		});
		// Bound: a round runs every renewal interval (500 ms).
		await("a's lease thread is held").atMost(Duration.ofSeconds(5))
			.until(() -> leaseThreadHeld.await(0, TimeUnit.MILLISECONDS));

		CompletionStage<Void> reset = a.projection.reset(TagOffset.START);
		letGo.countDown();
		// Bound: the batch in hand ends at once, then one cursor write.
		result(reset, Duration.ofSeconds(20));
		int handledByA = a.handled.get();

		assertThat(writes).as("the reset's cursor write, applied under a's epoch")
			.contains(new Write("a", TagOffset.START, epoch, true));
		assertThat(a.term().valid()).as("a's term is still held and valid (its release waits for the lease thread)")
			.isTrue();
		// Bound: a restarted runner fences, polls (every 100 ms) and re-handles the journal from the start in well
		// under a second; watched for two, while a's term is still valid.
		await("the reset does not start a's retired runner").during(Duration.ofSeconds(2))
			.atMost(Duration.ofSeconds(4))
			.until(() -> aRunner.status().state() == ProjectionState.STOPPED && a.handled.get() == handledByA
					&& a.handledTwice.get() == 0);

		leaseThreadGoesOn.complete(null);
		// Bound: a releases the lease at once, b takes it on its next round (500 ms) and fences the cursor.
		await("b owns the segment").atMost(LEASE_TIMEOUT.multipliedBy(2))
			.until(() -> "b".equals(this.shared.owners(name, 1).get(segmentKey)) && b.segment().runner != null);
		long bEpoch = b.term().epoch();
		assertThat(bEpoch).isGreaterThan(epoch);
		assertThat(writes.stream().filter((w) -> w.instance().equals("b") && w.applied()).findFirst())
			.as("b's fence stores the reset's cursor under its epoch")
			.contains(new Write("b", TagOffset.START, bEpoch, true));

		// Bound: b reads the whole journal of the tag from the start in a few polls.
		await("b handles every event from the reset's cursor").atMost(Duration.ofSeconds(20))
			.until(() -> b.handledAll(appended.all()));
		appended.append(ENTITIES);
		await("b handles the events appended after").atMost(Duration.ofSeconds(20))
			.until(() -> b.handledAll(appended.all()));

		assertThat(aRunner.status().state()).as("a's runner stays retired").isEqualTo(ProjectionState.STOPPED);
		assertThat(a.handled.get()).as("a handles nothing after the hand-over").isEqualTo(handledByA);
		assertThat(a.handledTwice.get()).isZero();
		assertThat(a.segment().runner).isNull();
		assertThat(a.segment().term).isNull();
	}

	/**
	 * @return a projection name whose one segment goes to {@code winner} when a and b are both live (rendezvous
	 * hashing of the name and segment)
	 */
	private static String projectionWonBy(String winner, String tag) {
		String segment = SharedProjectionFixture.segmentKeys(1).get(0);
		for (int i = 0;; i++) {
			String name = tag + "-" + i;
			if (winner.equals(Rendezvous.winner(name, segment, List.of("a", "b")))) {
				return name;
			}
		}
	}

	private static boolean running(SegmentRunner runner) {
		return runner != null && runner.status().state() == ProjectionState.RUNNING;
	}

	/** One cursor write: who, the cursor and epoch, and whether Cassandra applied it. */
	record Write(String instance, TagOffset offset, long epoch, boolean applied) {
	}

	/** One sharing engine with the projection of one segment, its lease requests sent through {@code session}. */
	private final class Instance {

		final ProjectionEngine engine;

		final SegmentedProjection<?> projection;

		/** Per entity, the sequence numbers handled. */
		final Map<String, Set<Long>> seen = new ConcurrentHashMap<>();

		final AtomicInteger handled = new AtomicInteger();

		final AtomicInteger handledTwice = new AtomicInteger();

		private volatile CountDownLatch holding;

		private volatile CountDownLatch letGo;

		Instance(String id, String name, String tag, CqlSession session, List<Write> writes) {
			SharedProjectionFixture fixture = SharedResetHandOverIT.this.shared;
			DurableStateStore recording = new CursorWrites(fixture.state,
					(key, revision, offset, epoch, error) -> writes.add(new Write(id, offset, epoch, error == null)));
			this.engine = ProjectionEngine.builder(fixture.journal)
				.readJournal(fixture.query)
				.offsetStore(new DurableStateOffsetStore(recording))
				.sharing(ProjectionSharing.create(session, fixture.options)
					.withInstanceId(id)
					.withLeaseTiming(LEASE_TIMEOUT, SharedProjectionFixture.RENEW_INTERVAL))
				.build();
			SharedResetHandOverIT.this.engines.add(this.engine);
			this.projection = (SegmentedProjection<?>) this.engine.register(Projection.byTag(name, TagFilter.tag(tag),
					AccountEvent.class, EventHandler.blocking(this::handle),
					ProjectionSettings.defaults().withSegments(1).withPollInterval(Duration.ofMillis(100))
						.withFeed(new FeedSettings(Duration.ZERO, Duration.ofSeconds(1), 20))));
		}

		SegmentedProjection.Segment segment() {
			return this.projection.segments().get(0);
		}

		/** @return the segment's lease term; fails the test if it holds none */
		LeaseTerm term() {
			LeaseTerm term = segment().term;
			assertThat(term).as("the term of %s", this.engine).isNotNull();
			return term;
		}

		/** The next event handled waits (its batch in hand) until {@code letGo}; {@code holding} says it waits. */
		void holdNext(CountDownLatch holding, CountDownLatch letGo) {
			this.letGo = letGo;
			this.holding = holding;
		}

		private void handle(PersistentEvent<AccountEvent> event) throws InterruptedException {
			CountDownLatch held = this.holding;
			if (held != null) {
				this.holding = null;
				held.countDown();
				// Bound: the test lets it go within its own waits; a failed test's clean-up lets it go too.
				this.letGo.await(60, TimeUnit.SECONDS);
			}
			this.handled.incrementAndGet();
			if (!this.seen.computeIfAbsent(event.persistenceId(), (pid) -> ConcurrentHashMap.newKeySet())
				.add(event.sequenceNr())) {
				this.handledTwice.incrementAndGet();
			}
		}

		boolean handledAll(Map<String, Long> appended) {
			return appended.entrySet().stream().allMatch((e) -> {
				Set<Long> handledOfEntity = this.seen.getOrDefault(e.getKey(), Set.of());
				for (long seq = 1; seq <= e.getValue(); seq++) {
					if (!handledOfEntity.contains(seq)) {
						return false;
					}
				}
				return true;
			});
		}

	}

	/** The events appended: per entity, its last sequence number; appended round robin over the entities. */
	private final class Appended {

		private final String tag;

		private final Map<String, Long> last = new ConcurrentHashMap<>();

		private int next;

		Appended(String tag) {
			this.tag = tag;
		}

		void append(int events) {
			for (int i = 0; i < events; i++) {
				String id = this.tag + "-account-" + (this.next++ % ENTITIES);
				long seq = this.last.getOrDefault(id, 0L);
				result(SharedResetHandOverIT.this.shared.journal.append(id, seq,
						List.of(EventToAppend.of(new Deposited(1), this.tag))));
				this.last.put(id, seq + 1);
			}
		}

		Map<String, Long> all() {
			return Map.copyOf(this.last);
		}

	}

}
