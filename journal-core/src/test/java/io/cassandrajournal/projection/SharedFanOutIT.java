package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateConflictException;
import io.cassandrajournal.state.DurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Two engines (instances) in one JVM share a per-persistenceId fan-out of 8 segments on a real node: each
 * segment's entities run on the instance holding its lease, entities created later are routed to their segment's
 * owner, a closed instance's entities continue on the other from their stored cursors, and a frozen instance's
 * segments are taken over while its stale cursor save is refused (fenced). Every cursor write is recorded: per
 * cursor, the stored epoch and offset never go backwards. The read model equals the fold of the journal.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SharedFanOutIT {

	private static final Duration LEASE_TIMEOUT = SharedProjectionFixture.LEASE_TIMEOUT;

	private static final int SEGMENTS = 8;

	private static final int PAGE_SIZE = 20;

	private static final List<String> INSTANCES = List.of("a", "b");

	private SharedProjectionFixture shared;

	private CassandraJournalOptions options;

	private CassandraJournal journal;

	private CassandraReadJournal query;

	private CassandraDurableStateStore state;

	/** Every cursor write any instance attempted, in the order they completed. */
	private final List<Write> writes = new CopyOnWriteArrayList<>();

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.shared = new SharedProjectionFixture(keyspace);
		this.options = this.shared.options;
		this.journal = this.shared.journal;
		this.query = this.shared.query;
		this.state = this.shared.state;
	}

	@Test
	void instancesSplitTheEntitiesBySegmentAndAClosedOnesEntitiesContinueFromTheirStoredCursors() {
		this.writes.clear();
		Fan fan = fan(50);
		Map<String, String> expected = Rendezvous.assign(fan.prefix, segmentKeys(), INSTANCES);
		// 40 entities exist before the fan-outs start; 10 more appear while they run (LivePersistenceIds).
		for (String entity : fan.entities.subList(0, 40)) {
			fan.append(entity, 3);
		}
		Model model = new Model();
		Instance a = new Instance("a", fan.prefix, model);
		Instance b = new Instance("b", fan.prefix, model);
		try {
			// Bound: members count as live after their second beat (~2 renewals), then each takes or hands over its
			// share on its next renewal: well within 20 s.
			await("each segment owned by its rendezvous winner").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100)).until(() -> owners(fan.prefix).equals(expected));
			await("the first events handled").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
				.until(() -> model.matches(fan.expected));

			// Ownership is stable: from now on each entity's events go to its segment's owner only.
			model.handledBy.clear();
			for (String entity : fan.entities) {
				fan.append(entity, 2);
			}
			// Bound: discovery every 200 ms, polls every 100 ms.
			await("every entity's new events handled").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
				.until(() -> model.matches(fan.expected));
			for (String entity : fan.entities) {
				String owner = expected.get(segmentOf(entity));
				assertThat(model.handledBy.get(entity)).as("instances that handled %s (segment %s)", entity,
						segmentOf(entity)).containsExactly(owner);
			}
			assertThat(fan.entities.stream().map((e) -> expected.get(segmentOf(e))).distinct())
				.as("both instances ran entities").containsExactlyInAnyOrder("a", "b");

			// a stops gracefully: its segments are released and taken by b, whose runners continue each entity from
			// the cursor a stored.
			result(a.engine.stopAll());
			a.engine.close();
			await("b holds every segment").atMost(LEASE_TIMEOUT.multipliedBy(2)).pollInterval(Duration.ofMillis(50))
				.until(() -> owners(fan.prefix).size() == SEGMENTS
						&& owners(fan.prefix).values().stream().allMatch("b"::equals));
			List<String> ofA = fan.entities.stream().filter((e) -> "a".equals(expected.get(segmentOf(e)))).toList();
			Map<String, Long> storedByA = new HashMap<>();
			for (String entity : ofA) {
				storedByA.put(entity, storedSequenceNr(fan.prefix, entity));
				assertThat(storedByA.get(entity)).as("%s: a stored its cursor after its last event", entity)
					.isEqualTo(fan.head(entity));
			}
			model.handledBy.clear();
			model.handledSequenceNrs.clear();
			for (String entity : fan.entities) {
				fan.append(entity, 2);
			}
			await("b handled every entity's events").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
				.until(() -> model.matches(fan.expected));
			for (String entity : ofA) {
				assertThat(model.handledSequenceNrs.get(entity)).as("%s continues from a's stored cursor", entity)
					.containsExactlyElementsOf(LongStream.rangeClosed(storedByA.get(entity) + 1, fan.head(entity))
						.boxed().toList());
				assertThat(model.handledBy.get(entity)).containsExactly("b");
			}
			assertThat(model.duplicates.get()).as("events handled twice (graceful hand-overs only)").isZero();
			assertThat(model.outOfOrder.get()).as("events handled ahead of their entity's next one").isZero();
		}
		finally {
			a.engine.close();
			b.engine.close();
		}
		assertCursorsNeverMovedBackOrToAnOlderEpoch(fan.prefix);
	}

	@Test
	void aFrozenInstancesSegmentsAreTakenOverAndItsStaleCursorSaveIsRefused() {
		this.writes.clear();
		Fan fan = fan(20);
		Map<String, String> expected = Rendezvous.assign(fan.prefix, segmentKeys(), INSTANCES);
		for (String entity : fan.entities) {
			fan.append(entity, 1);
		}
		Model model = new Model();
		Instance a = new Instance("a", fan.prefix, model);
		Instance b = new Instance("b", fan.prefix, model);
		try {
			await("each segment owned by its rendezvous winner").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100)).until(() -> owners(fan.prefix).equals(expected));
			await("the first events handled").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
				.until(() -> model.matches(fan.expected));

			// a freezes: handlers blocked, then, once one holds a batch, no renewals and no beats (a paused JVM).
			a.blockHandlers();
			for (String entity : fan.entities) {
				fan.append(entity, 1);
			}
			// Bound: a runs about half the entities, each polled every 100 ms.
			await("a handler of a holds a batch").atMost(Duration.ofSeconds(10)).until(() -> a.holding.get() > 0);
			a.engine.freezeLeases(true);
			long frozen = System.nanoTime();
			// Bound: b sees a's beat and lease rows unchanged for the lease timeout, then takes on its next round.
			await("b takes a's segments").atMost(LEASE_TIMEOUT.multipliedBy(3)).pollInterval(Duration.ofMillis(50))
				.until(() -> owners(fan.prefix).size() == SEGMENTS
						&& owners(fan.prefix).values().stream().allMatch("b"::equals));
			await("b handled a's entities' events").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
				.until(() -> model.matches(fan.expected));

			// a wakes with a clock that did not count the pause: its term looks valid to it, so its runners finish
			// the batch in hand and try to save; Cassandra refuses (b fenced each entity's cursor), which ends the
			// term for every entity of the segment.
			int refusedBefore = refused("a");
			a.thawHandlers(Duration.ofNanos(System.nanoTime() - frozen));
			await("a's stale cursor save is refused").atMost(Duration.ofSeconds(20)).until(() -> refused("a") > refusedBefore);
			a.engine.freezeLeases(false);
			// Bound: a drops its lost terms, beats again; b hands over a's share on its next rounds.
			await("a gets its share back").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
				.until(() -> owners(fan.prefix).equals(expected));
			for (String entity : fan.entities) {
				fan.append(entity, 1);
			}
			await("read model equals the journal").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200))
				.until(() -> model.matches(fan.expected));
			System.out.printf("Shared fan-out: %d events handled twice, %d refused cursor writes by woken a%n",
					model.duplicates.get(), refused("a"));
			assertThat(model.outOfOrder.get()).as("events handled ahead of their entity's next one").isZero();
		}
		finally {
			a.engine.close();
			b.engine.close();
		}
		assertCursorsNeverMovedBackOrToAnOlderEpoch(fan.prefix);
	}

	@Test
	void aSharedFanOutAndAProjectionCannotHaveOneName() {
		String name = "clash" + System.nanoTime();
		try (ProjectionEngine engine = ProjectionEngine.builder(this.journal)
			.readJournal(this.query)
			.offsetStore(new DurableStateOffsetStore(this.state))
			.sharing(ProjectionSharing.create(this.shared.keyspace.session(), this.options).withInstanceId("a"))
			.build()) {
			engine.register(Projection.byTag(name, TagFilter.tag(name), AccountEvent.class, EventHandler.blocking((e) -> {
			}), ProjectionSettings.defaults()));
			// The leases of both would be kept under the one name.
			assertThatThrownBy(() -> engine.fanOut(name, AccountEvent.class, (entity) -> EventHandler.blocking((e) -> {
			}), ProjectionSettings.defaults(), Duration.ofSeconds(1))).isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("choose another name prefix");
			engine.fanOut(name + "f", AccountEvent.class, (entity) -> EventHandler.blocking((e) -> {
			}), ProjectionSettings.defaults(), Duration.ofSeconds(1));
			assertThat(engine.segments(name + "f")).hasSize(1);
			assertThatThrownBy(() -> engine.register(Projection.byTag(name + "f", TagFilter.tag(name), AccountEvent.class,
					EventHandler.blocking((e) -> {
					}), ProjectionSettings.defaults()))).isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("shared fan-out");
		}
	}

	/** A fan-out name whose segments rendezvous-hash to both instances, and its entities. */
	private Fan fan(int entities) {
		for (int attempt = 0;; attempt++) {
			String prefix = "fan" + System.nanoTime() + "x" + attempt;
			Fan fan = new Fan(prefix, entities);
			Map<String, String> owners = Rendezvous.assign(prefix, segmentKeys(), INSTANCES);
			Map<String, Long> perInstance = fan.entities.stream()
				.collect(Collectors.groupingBy((e) -> owners.get(segmentOf(e)), Collectors.counting()));
			if (perInstance.getOrDefault("a", 0L) >= entities / 4 && perInstance.getOrDefault("b", 0L) >= entities / 4) {
				return fan;
			}
		}
	}

	private String segmentOf(String entity) {
		int slice = this.options.sliceHash().slice(entity);
		return SliceRange.split(SEGMENTS).stream().filter((r) -> r.contains(slice)).findFirst().orElseThrow().key();
	}

	private long storedSequenceNr(String prefix, String entity) {
		String key = DurableStateOffsetStore.key(ProjectionId.byPersistenceId(prefix + "-" + entity, entity));
		Optional<DurableState<DurableStateOffsetStore.StoredCursor>> stored = result(
				this.state.get(key, DurableStateOffsetStore.StoredCursor.class));
		return stored.orElseThrow().value().sequenceNr();
	}

	private void assertCursorsNeverMovedBackOrToAnOlderEpoch(String prefix) {
		Map<String, List<Write>> byKey = this.writes.stream().filter(Write::applied)
			.filter((w) -> w.key().startsWith("projection-offset|" + prefix + "-"))
			.collect(Collectors.groupingBy(Write::key));
		assertThat(byKey).isNotEmpty();
		byKey.forEach((key, applied) -> {
			List<Write> ordered = applied.stream().sorted(Comparator.comparingLong(Write::revision)).toList();
			for (int i = 1; i < ordered.size(); i++) {
				Write before = ordered.get(i - 1);
				Write after = ordered.get(i);
				assertThat(after.epoch()).as("%s: %s after %s", key, after, before).isGreaterThanOrEqualTo(before.epoch());
				// An entity's cursor is its sequence number (its time stamp field is 0 or the event's, which the
				// runner does not keep steady: a save after a restart may rewrite the same number with 0).
				assertThat(after.offset().sequenceNr()).as("%s: %s after %s", key, after, before)
					.isGreaterThanOrEqualTo(before.offset().sequenceNr());
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
	private Map<String, String> owners(String prefix) {
		return this.shared.owners(prefix, SEGMENTS);
	}

	/** One cursor write: who, which key and revision, the cursor and epoch, and whether Cassandra applied it. */
	record Write(String instance, String key, long revision, TagOffset offset, long epoch, boolean applied) {
	}

	/** The entities of one fan-out and the fold of what was appended to them. */
	private final class Fan {

		final String prefix;

		final List<String> entities = new ArrayList<>();

		final Map<String, long[]> expected = new ConcurrentHashMap<>();

		Fan(String prefix, int count) {
			this.prefix = prefix;
			for (int i = 0; i < count; i++) {
				this.entities.add(prefix + "-account-" + i);
			}
		}

		void append(String entity, int events) {
			long[] account = this.expected.computeIfAbsent(entity, (pid) -> new long[2]);
			List<EventToAppend> batch = new ArrayList<>();
			long amount = 0;
			for (int i = 0; i < events; i++) {
				long each = 1 + ((account[0] + i) % 7);
				amount += each;
				batch.add(EventToAppend.of(new Deposited(each), this.prefix));
			}
			result(SharedFanOutIT.this.journal.append(entity, account[0], batch));
			account[0] += events;
			account[1] += amount;
		}

		long head(String entity) {
			return this.expected.get(entity)[0];
		}

	}

	/** One engine with its own offset store, lease thread, clock and threads, running the fan-out. */
	private final class Instance {

		final ProjectionEngine engine;

		final AtomicLong unCounted = new AtomicLong();

		volatile CountDownLatch paused = new CountDownLatch(0);

		/** Handler calls that found the handlers blocked and wait, each holding its runner's batch. */
		final AtomicInteger holding = new AtomicInteger();

		Instance(String id, String prefix, Model model) {
			DurableStateStore recording = new CursorWrites(SharedFanOutIT.this.state,
					(key, revision, offset, epoch, error) -> {
						if (error == null || Errors.unwrap(error) instanceof DurableStateConflictException) {
							SharedFanOutIT.this.writes.add(new Write(id, key, revision, offset, epoch, error == null));
						}
					});
			this.engine = SharedFanOutIT.this.shared.engine(id, recording)
				.nanoClock(() -> System.nanoTime() - this.unCounted.get())
				.build();
			this.engine.fanOut(prefix, AccountEvent.class, (entity) -> EventHandler.blocking((event) -> {
				CountDownLatch latch = this.paused;
				if (latch.getCount() > 0) {
					this.holding.incrementAndGet();
				}
				latch.await();
				model.apply(id, event);
			}), ProjectionSettings.defaults().withSegments(SEGMENTS).withPollInterval(Duration.ofMillis(100))
				.withFeed(new FeedSettings(Duration.ZERO, Duration.ofSeconds(1), PAGE_SIZE)), Duration.ofMillis(200));
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

	/**
	 * The read model: per entity the last sequence number applied and the balance, idempotent by sequence number;
	 * also which instances handled each entity and which sequence numbers were applied.
	 */
	static final class Model {

		private final Map<String, long[]> accounts = new ConcurrentHashMap<>();

		final Map<String, Set<String>> handledBy = new ConcurrentHashMap<>();

		final Map<String, List<Long>> handledSequenceNrs = new ConcurrentHashMap<>();

		final AtomicLong duplicates = new AtomicLong();

		final AtomicLong outOfOrder = new AtomicLong();

		synchronized void apply(String instance, PersistentEvent<AccountEvent> event) {
			this.handledBy.computeIfAbsent(event.persistenceId(), (pid) -> ConcurrentHashMap.newKeySet()).add(instance);
			long[] account = this.accounts.computeIfAbsent(event.persistenceId(), (pid) -> new long[2]);
			if (event.sequenceNr() <= account[0]) {
				this.duplicates.incrementAndGet();
				return;
			}
			if (event.sequenceNr() != account[0] + 1) {
				// An event ahead of the entity's next one: its order was broken (asserted to stay zero).
				this.outOfOrder.incrementAndGet();
				return;
			}
			account[0] = event.sequenceNr();
			account[1] += ((Deposited) event.payload()).amount();
			this.handledSequenceNrs.computeIfAbsent(event.persistenceId(), (pid) -> new CopyOnWriteArrayList<>())
				.add(event.sequenceNr());
		}

		synchronized boolean matches(Map<String, long[]> expected) {
			return expected.entrySet().stream().allMatch((e) -> {
				long[] account = this.accounts.get(e.getKey());
				return account != null && account[0] == e.getValue()[0] && account[1] == e.getValue()[1];
			});
		}

	}

}
