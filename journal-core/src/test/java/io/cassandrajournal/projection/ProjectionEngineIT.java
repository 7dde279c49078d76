package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Projections on a real node: the Cassandra dead-letter queue with parking, durable offsets across
 * restarts, and push delivery.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProjectionEngineIT {

	private CassandraJournalOptions options;

	private CassandraJournal journal;

	private CassandraReadJournal query;

	private CassandraDurableStateStore state;

	private CassandraDeadLetterQueue deadLetters;

	private TestKeyspace keyspace;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		this.journal = CassandraJournal.create(keyspace.session(), this.options, serializer);
		this.query = CassandraReadJournal.create(this.journal, keyspace.session(), this.options, serializer);
		this.state = CassandraDurableStateStore.create(keyspace.session(), this.options, serializer);
		this.deadLetters = CassandraDeadLetterQueue.create(keyspace.session(), this.options, "projection_dead_letters");
	}

	private ProjectionEngine engine() {
		return ProjectionEngine.builder(this.journal)
			.readJournal(this.query)
			.offsetStore(new DurableStateOffsetStore(this.state))
			.deadLetterQueue(this.deadLetters)
			.build();
	}

	private void append(String pid, long expected, String tag, long... amounts) {
		List<EventToAppend> events = new ArrayList<>();
		for (long amount : amounts) {
			events.add(EventToAppend.of(new Deposited(amount), tag));
		}
		result(this.journal.append(pid, expected, events));
	}

	@Test
	void deadLettersParkLaterEventsOfTheirEntityUntilRedelivered() {
		String tag = "park-" + System.nanoTime();
		append(tag + "-a", 0, tag, 1, 2, 3);
		append(tag + "-b", 0, tag, 10, 20);
		AtomicBoolean broken = new AtomicBoolean(true);
		List<String> handled = new CopyOnWriteArrayList<>();
		try (ProjectionEngine engine = engine()) {
			ProjectionControl control = engine.register(Projection.byTag("parking-" + tag, TagFilter.tag(tag),
					AccountEvent.class, ProjectionHandler.blocking((event) -> {
						if (broken.get() && event.persistenceId().endsWith("-a") && event.sequenceNr() == 2) {
							throw new IllegalStateException("cannot handle a#2 yet");
						}
						handled.add(event.persistenceId().substring(tag.length() + 1) + event.sequenceNr());
					}), ProjectionSettings.defaults().withRecoveryStrategy(RecoveryStrategy.SKIP).withParkAfterDeadLetter(true)));
			result(control.start());
			await().until(() -> handled.size() == 3);
			assertThat(handled).containsExactlyInAnyOrder("a1", "b1", "b2");
			await().until(() -> result(control.deadLetters(10)).size() == 2);
			List<DeadLetter> letters = result(control.deadLetters(10));
			assertThat(letters).extracting((d) -> d.event().sequenceNr()).containsExactly(2L, 3L);
			assertThat(letters.get(0).error()).contains("cannot handle a#2 yet");
			assertThat(letters.get(1).error()).contains("parked behind");
			assertThat(letters.get(0).projection().key()).isEqualTo(tag);

			broken.set(false);
			assertThat(result(control.redeliverDeadLetters())).isEqualTo(2);
			assertThat(handled).containsExactly("a1", "b1", "b2", "a2", "a3");
			assertThat(result(control.deadLetters(10))).isEmpty();
			append(tag + "-a", 3, tag, 4);
			await().until(() -> handled.contains("a4"));
		}
	}

	@Test
	void durableOffsetsSurviveARestart() {
		// Without the trailing sweep the stored offset is the last handled event; with it, the offset trails
		// real time by the backtrack window and a restart re-delivers that window (at-least-once).
		ProjectionSettings settings = ProjectionSettings.defaults()
			.withFeed(ProjectionSettings.defaults().feed().withBacktrackWindow(Duration.ZERO));
		String tag = "durable-" + System.nanoTime();
		append(tag + "-x", 0, tag, 1, 2, 3, 4, 5);
		List<Long> first = new CopyOnWriteArrayList<>();
		try (ProjectionEngine engine = engine()) {
			ProjectionControl control = engine.register(Projection.byTag("durable-" + tag, TagFilter.tag(tag),
					AccountEvent.class, ProjectionHandler.blocking((event) -> first.add(event.sequenceNr())), settings));
			result(control.start());
			await().until(() -> first.size() == 5);
			await().until(() -> control.status().offset().sequenceNr() == 5);
		}
		append(tag + "-x", 5, tag, 6);
		List<Long> second = new CopyOnWriteArrayList<>();
		try (ProjectionEngine engine = engine()) {
			ProjectionControl control = engine.register(Projection.byTag("durable-" + tag, TagFilter.tag(tag),
					AccountEvent.class, ProjectionHandler.blocking((event) -> second.add(event.sequenceNr())), settings));
			result(control.start());
			await().until(() -> second.contains(6L));
			assertThat(second).doesNotContain(1L, 2L, 3L, 4L);
		}
	}

	@Test
	void anAppendInTheSameProcessReachesItsHandlerWellBeforeTheNextPoll() {
		String tag = "push-" + System.nanoTime();
		Map<Long, Long> seenAt = new ConcurrentHashMap<>();
		List<Long> latenciesMicros = new ArrayList<>();
		try (ProjectionEngine engine = engine()) {
			ProjectionControl control = engine.register(Projection.byTag("push-" + tag, TagFilter.tag(tag),
					AccountEvent.class, ProjectionHandler.blocking((event) -> seenAt.put(event.sequenceNr(), System.nanoTime())),
					ProjectionSettings.defaults().withPollInterval(Duration.ofSeconds(10))));
			result(control.start());
			long head = 0;
			for (int i = 0; i < 200; i++) {
				long appended = System.nanoTime();
				head = result(this.journal.append(tag + "-p", head, List.of(EventToAppend.of(new Deposited(i), tag))))
					.lastSequenceNr();
				long seq = head;
				// Checked every 2 ms from the start: Awaitility's default (first check after 100 ms, then every 100 ms)
				// made each of the 200 rounds last at least 100 ms. The latency comes from seenAt, not from this wait.
				await().atMost(Duration.ofSeconds(5)).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(2))
					.until(() -> seenAt.containsKey(seq));
				latenciesMicros.add((seenAt.get(seq) - appended) / 1000);
			}
		}
		Collections.sort(latenciesMicros);
		long p50 = latenciesMicros.get(latenciesMicros.size() / 2);
		long p99 = latenciesMicros.get((int) Math.ceil(latenciesMicros.size() * 0.99) - 1);
		System.out.printf("push delivery, append start to handler (200 events, poll interval 10 s): p50 %.1f ms, p99 %.1f ms%n",
				p50 / 1000.0, p99 / 1000.0);
		assertThat(p99).as("p99 in microseconds").isLessThan(1_000_000);
	}

	@Test
	void fanOutStartsOneProjectionPerEntityIncludingEntitiesCreatedLater() {
		String run = "fan-" + System.nanoTime();
		Map<String, List<Long>> seen = new ConcurrentHashMap<>();
		append(run + "-a", 0, "t", 1, 2);
		append(run + "-b", 0, "t", 1);
		try (ProjectionEngine engine = engine()) {
			engine.fanOut(run, AccountEvent.class,
					(id) -> ProjectionHandler.blocking((event) -> seen
						.computeIfAbsent(event.persistenceId(), (k) -> new CopyOnWriteArrayList<>())
						.add(event.sequenceNr())),
					ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(200)), Duration.ofMillis(200));
			await().until(() -> seen.getOrDefault(run + "-a", List.of()).size() == 2
					&& seen.getOrDefault(run + "-b", List.of()).size() == 1);
			append(run + "-c", 0, "t", 1, 2, 3);
			append(run + "-a", 2, "t", 3);
			await().until(() -> seen.getOrDefault(run + "-c", List.of()).size() == 3
					&& seen.getOrDefault(run + "-a", List.of()).size() == 3);
			assertThat(seen.get(run + "-a")).containsExactly(1L, 2L, 3L);
			assertThat(seen.get(run + "-b")).containsExactly(1L);
			assertThat(seen.get(run + "-c")).as("an entity created after the fan-out started").containsExactly(1L, 2L, 3L);
			assertThat(engine.projection(run + "-" + run + "-c")).isPresent();
		}
	}

	@Test
	void concurrencyRunsEntitiesInParallelButNeverOneEntityTwiceAtOnce() {
		String tag = "lanes-" + System.nanoTime();
		for (int p = 0; p < 8; p++) {
			append(tag + "-" + p, 0, tag, 1, 2, 3, 4, 5, 6);
		}
		Map<String, List<Long>> seen = new ConcurrentHashMap<>();
		Map<String, Boolean> inFlight = new ConcurrentHashMap<>();
		java.util.concurrent.atomic.AtomicInteger running = new java.util.concurrent.atomic.AtomicInteger();
		java.util.concurrent.atomic.AtomicInteger mostAtOnce = new java.util.concurrent.atomic.AtomicInteger();
		AtomicBoolean overlapped = new AtomicBoolean();
		try (ProjectionEngine engine = engine()) {
			ProjectionControl control = engine.register(Projection.byTag("lanes-" + tag, TagFilter.tag(tag),
					AccountEvent.class, ProjectionHandler.blocking((event) -> {
						if (inFlight.putIfAbsent(event.persistenceId(), Boolean.TRUE) != null) {
							overlapped.set(true);
						}
						mostAtOnce.accumulateAndGet(running.incrementAndGet(), Math::max);
						try {
							Thread.sleep(15);
						}
						catch (InterruptedException ex) {
							Thread.currentThread().interrupt();
						}
						running.decrementAndGet();
						inFlight.remove(event.persistenceId());
						seen.computeIfAbsent(event.persistenceId(), (k) -> new CopyOnWriteArrayList<>()).add(event.sequenceNr());
					}), ProjectionSettings.defaults().withConcurrency(4)));
			result(control.start());
			await().until(() -> seen.values().stream().mapToInt(List::size).sum() == 48);
			await().untilAsserted(() -> assertThat(control.status().lagEvents()).isZero());
			result(control.stop());
		}
		assertThat(overlapped).as("two events of one entity in flight at once").isFalse();
		assertThat(seen.values()).allSatisfy((events) -> assertThat(events).containsExactly(1L, 2L, 3L, 4L, 5L, 6L));
		assertThat(mostAtOnce.get()).as("handlers running at the same time").isGreaterThan(1).isLessThanOrEqualTo(4);
	}

	@Test
	void aLaneThatStopsKeepsTheCursorBeforeItsEventWhileOtherLanesRanAhead() {
		String tag = "lanefail-" + System.nanoTime();
		for (int p = 0; p < 4; p++) {
			append(tag + "-" + p, 0, tag, 1, 2, 3, 4, 5);
		}
		String bad = tag + "-2";
		AtomicBoolean broken = new AtomicBoolean(true);
		Map<String, List<Long>> seen = new ConcurrentHashMap<>();
		ProjectionHandler<AccountEvent> handler = ProjectionHandler.blocking((event) -> {
			if (broken.get() && event.persistenceId().equals(bad) && event.sequenceNr() == 3) {
				throw new IllegalStateException("cannot handle " + bad + "#3");
			}
			seen.computeIfAbsent(event.persistenceId(), (k) -> new CopyOnWriteArrayList<>()).add(event.sequenceNr());
		});
		// No backtrack window: the stored offset follows the handled events closely, so a cursor moved past
		// the failed event would show (it would never come again).
		ProjectionSettings settings = ProjectionSettings.defaults()
			.withConcurrency(3)
			.withRecoveryStrategy(RecoveryStrategy.FAIL)
			.withFeed(io.cassandrajournal.query.FeedSettings.DEFAULTS.withPageSize(100)
				.withBacktrackWindow(Duration.ZERO));
		try (ProjectionEngine engine = engine()) {
			ProjectionControl control = engine.register(Projection.byTag("lanefail-" + tag, TagFilter.tag(tag),
					AccountEvent.class, handler, settings));
			result(control.start());
			await().until(() -> control.status().state() == ProjectionState.FAILED);
			result(control.stop());
			assertThat(seen.get(bad)).containsExactly(1L, 2L);
		}
		// The stored cursor is before the failed event: a new engine delivers it, then the rest of its entity
		// in order (events before it may come again: at least once).
		broken.set(false);
		seen.clear();
		try (ProjectionEngine engine = engine()) {
			ProjectionControl control = engine.register(Projection.byTag("lanefail-" + tag, TagFilter.tag(tag),
					AccountEvent.class, handler, settings));
			result(control.start());
			await().until(() -> seen.getOrDefault(bad, List.of()).contains(5L));
			List<Long> redelivered = seen.get(bad);
			assertThat(redelivered.subList(redelivered.indexOf(3L), redelivered.size())).containsExactly(3L, 4L, 5L);
			result(control.stop());
		}
	}

	@Test
	void lagInEventsCountsWhatWaitsAfterTheCursor() {
		String tag = "lag-" + System.nanoTime();
		String pid = tag + "-p";
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 1; i <= 250; i++) {
			events.add(EventToAppend.of(new Deposited(i), tag));
		}
		result(this.journal.append(pid, 0, events));
		ProjectionHandler<AccountEvent> stopsAt150 = ProjectionHandler.blocking((event) -> {
			if (event.sequenceNr() == 150) {
				throw new IllegalStateException("stop here");
			}
		});
		ProjectionSettings settings = ProjectionSettings.defaults().withRecoveryStrategy(RecoveryStrategy.FAIL);
		try (ProjectionEngine engine = engine()) {
			ProjectionControl byTag = engine.register(
					Projection.byTag("lag-tag-" + tag, TagFilter.tag(tag), AccountEvent.class, stopsAt150, settings));
			ProjectionControl byId = engine.register(
					Projection.byPersistenceId("lag-id-" + tag, pid, AccountEvent.class, stopsAt150, settings));
			result(engine.startAll());
			await().until(() -> byTag.status().state() == ProjectionState.FAILED
					&& byId.status().state() == ProjectionState.FAILED);
			// Pages of 100: the first batch (1..100) was handled, then 150 more waited; the second batch stopped.
			await().untilAsserted(() -> assertThat(byTag.status().lagEvents()).isEqualTo(150));
			await().untilAsserted(() -> assertThat(byId.status().lagEvents()).isEqualTo(150));
		}
	}

	/**
	 * Finding 11 (docs/reliability.md) through the engine: 11 and 12 are claimed with 13 visible; after the in-flight
	 * wait the projection by persistenceId steps over them and handles 13. Their events then appear (a batch replayed
	 * from the batch log after a restart): the projection handles them late, once each.
	 */
	@Test
	void aProjectionByPersistenceIdHandlesEventsThatAppearInACrashGapItSteppedOver() {
		CassandraJournal waitsOneSecond = CassandraJournal.create(this.keyspace.session(),
				this.options.withInFlightWait(Duration.ofSeconds(1)), new JacksonEventSerializer());
		String pid = "late-" + System.nanoTime();
		List<EventToAppend> ten = new ArrayList<>();
		for (int i = 1; i <= 10; i++) {
			ten.add(EventToAppend.of(new Deposited(i)));
		}
		result(waitsOneSecond.append(pid, 0, ten));
		long claimedAt = System.currentTimeMillis();
		this.keyspace.session()
			.execute("UPDATE metadata SET max_sequence_nr = 13, updated_at = ? WHERE persistence_id = ?", claimedAt, pid);
		writeEvent(pid, 13, claimedAt);
		List<Long> handled = new CopyOnWriteArrayList<>();
		ProjectionSettings settings = ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(100));
		try (ProjectionEngine engine = ProjectionEngine.builder(waitsOneSecond)
			.offsetStore(new DurableStateOffsetStore(this.state))
			.deadLetterQueue(this.deadLetters)
			.build()) {
			engine.register(Projection.byPersistenceId("late-" + pid, pid, AccountEvent.class,
					ProjectionHandler.blocking((event) -> handled.add(event.sequenceNr())), settings));
			result(engine.startAll());
			await().alias("13 handled once 11 and 12 are stepped over")
				.atMost(Duration.ofSeconds(20))
				.until(() -> handled.contains(13L));

			writeEvent(pid, 11, claimedAt);
			writeEvent(pid, 12, claimedAt);
			await().alias("11 and 12 handled late").atMost(Duration.ofSeconds(20)).until(() -> handled.contains(12L));
			await().alias("nothing handled twice").during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5))
				.until(() -> handled.size() == 13);
			assertThat(handled).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 13L, 11L, 12L);
		}
	}

	private void writeEvent(String pid, long sequenceNr, long timestamp) {
		this.keyspace.session()
			.execute("INSERT INTO events (persistence_id, partition_nr, sequence_nr, timestamp, payload, tags) "
					+ "VALUES (?, 0, ?, ?, ?, ?)", pid, sequenceNr, timestamp,
					"{\"kind\":\"deposited\",\"amount\":" + sequenceNr + "}", Set.of());
	}

}
