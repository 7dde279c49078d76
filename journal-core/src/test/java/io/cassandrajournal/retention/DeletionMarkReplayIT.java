package io.cassandrajournal.retention;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.entity.EventsDeletedException;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.ReplayResult;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.DepositBalance;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.JournalFixture;
import io.cassandrajournal.testing.JournalLogs;
import io.cassandrajournal.testing.LateBatches;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * deleteTo's mark read by contiguous replays is not proof that every number under it is gone, nor final when it is
 * read (docs/reliability.md, finding 23, items R1 and R2):
 * <ul>
 * <li>an event visible below the mark (written after the range deletion: a claim released and taken again during a
 * deleteTo, or a writer whose clock runs ahead) is delivered, by replays and by projections that page through the
 * range, not stepped over as deleted;</li>
 * <li>a deleteTo that completes while a replay waits on its range as a hole is seen before the replay seals it: the
 * range is reported deleted, not sealed as a crash gap;</li>
 * <li>a claim in flight when a deleteTo without the tag index read the head, released and taken again by another
 * append, is not under the mark: that append's events are delivered when its batch lands (finding 23, Review,
 * item 4).</li>
 * </ul>
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeletionMarkReplayIT {

	/** Long, so that a replay that took deleted numbers for an append in flight would be seen waiting. */
	private static final Duration IN_FLIGHT_WAIT = Duration.ofSeconds(20);

	private TestKeyspace keyspace;

	private JournalLogs logs;

	@BeforeAll
	void keyspace(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.logs = JournalLogs.capture();
	}

	@AfterAll
	void detach() {
		this.logs.close();
	}

	private List<ILoggingEvent> logsAbout(String what, Level level) {
		return this.logs.about(what, level);
	}

	private static List<EventToAppend> deposits(int count) {
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			events.add(EventToAppend.of(new Deposited(1)));
		}
		return events;
	}

	private CassandraJournal journal(CassandraJournalOptions options) {
		return CassandraJournal.create(this.keyspace.session(), options, new JacksonEventSerializer());
	}

	private CassandraJournalOptions options() {
		return CassandraJournalOptions.create().withKeyspace(this.keyspace.name()).withInFlightWait(IN_FLIGHT_WAIT);
	}

	private String events(CassandraJournal journal) {
		return this.keyspace.name() + "." + journal.options().eventsTable();
	}

	/**
	 * Events 1..15, deleteTo(10), then event 8 written again with a write time after the range deletion (what a
	 * re-claimed number's batch, or a batch from a writer whose clock runs ahead, leaves).
	 */
	private String survivorBelowTheMark(CassandraJournal journal) {
		String id = "survivor-" + UUID.randomUUID();
		result(journal.append(id, 0, deposits(15)));
		Row eight = this.keyspace.session()
			.execute(SimpleStatement.newInstance("SELECT JSON * FROM " + events(journal)
					+ " WHERE persistence_id = ? AND partition_nr = 0 AND sequence_nr = 8", id))
			.one();
		assertThat(eight).isNotNull();
		result(journal.deleteTo(id, 10));
		// The session's client-side time stamps only grow: this write is newer than the range deletion.
		this.keyspace.session()
			.execute(SimpleStatement.newInstance("INSERT INTO " + events(journal) + " JSON ?", eight.getString(0)));
		return id;
	}

	@Test
	void anEventVisibleBelowTheDeletionMarkIsDeliveredNotSkippedAsDeleted() {
		CassandraJournal journal = journal(options());
		String id = survivorBelowTheMark(journal);

		List<Long> seen = new CopyOnWriteArrayList<>();
		ReplayResult all = result(journal.replayContiguous(id, 1, Long.MAX_VALUE, AccountEvent.class,
				(event) -> seen.add(event.sequenceNr())), Duration.ofSeconds(10));
		assertThat(seen).as("event 8 survived the deletion").containsExactly(8L, 11L, 12L, 13L, 14L, 15L);
		assertThat(all.deleted()).isEqualTo(new SequenceRange(1, 10));
		assertThat(all.crashGaps()).as("9..10 are deleted, not a hole").isEmpty();
		assertThat(all.coveredTo()).isEqualTo(15);

		// A replay ending below the survivor does not report a range over it (a projection steps over all of it).
		ReplayResult part = result(journal.replayContiguous(id, 1, 5, AccountEvent.class, (event) -> seen.add(0L)),
				Duration.ofSeconds(10));
		assertThat(part.deleted()).isEqualTo(new SequenceRange(1, 7));
		assertThat(part.coveredTo()).isEqualTo(5);

		assertThat(logsAbout(id, Level.WARN)).as("one warning naming the entity, the event and the mark")
			.singleElement()
			.satisfies((e) -> assertThat(e.getFormattedMessage()).contains("Event 8").contains("mark 10"));
		// README "Retention", Loads: a load whose fold would start below deleted events still fails.
		EntityRepository<Long, AccountEvent> repository = EntityRepository.create(journal, null, new DepositBalance(0),
				0);
		assertThatThrownBy(() -> result(repository.load(id), Duration.ofSeconds(10)))
			.isInstanceOf(EventsDeletedException.class)
			.hasMessageContaining(id);
	}

	@Test
	void aPersistenceIdProjectionPagingThroughTheDeletedRangeDeliversTheSurvivor() {
		CassandraJournal journal = journal(options());
		String id = survivorBelowTheMark(journal);
		List<Long> handled = new CopyOnWriteArrayList<>();
		ProjectionSettings settings = ProjectionSettings.defaults()
			.withFeed(ProjectionSettings.defaults().feed().withPageSize(5));
		Projection<AccountEvent> projection = Projection.byPersistenceId("survivor", id, AccountEvent.class,
				EventHandler.blocking((event) -> handled.add(event.sequenceNr())), settings);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		try (ProjectionEngine engine = ProjectionEngine.builder(journal)
			.readJournal(CassandraReadJournal.create(journal, this.keyspace.session(), journal.options(), serializer))
			.offsetStore(new DurableStateOffsetStore(
					CassandraDurableStateStore.create(this.keyspace.session(), journal.options(), serializer)))
			.build()) {
			ProjectionControl control = engine.register(projection);
			result(control.start());
			await().alias("the projection reached the head").atMost(Duration.ofSeconds(15))
				.until(() -> handled.contains(15L));
			assertThat(handled).containsExactly(8L, 11L, 12L, 13L, 14L, 15L);
		}
	}

	@Test
	void aDeleteToThatCompletesWhileAReplayWaitsOnItsRangeIsReportedDeletedNotSealed() {
		CountingClock clock = new CountingClock(new SettableClock(Instant.now()));
		// Long, and on a settable clock: the replay waits until the test moves the clock on.
		CassandraJournal journal = journal(options().withInFlightWait(Duration.ofSeconds(60)).withClock(clock));
		String id = "during-wait-" + UUID.randomUUID();
		result(journal.append(id, 0, deposits(10)));
		// A deleteTo(5) in progress: its range deletion is written, its mark (written last) not yet.
		this.keyspace.session()
			.execute(SimpleStatement.newInstance("DELETE FROM " + events(journal)
					+ " WHERE persistence_id = ? AND partition_nr = 0 AND sequence_nr <= 5", id));
		int before = clock.reads.get();
		List<Long> seen = new CopyOnWriteArrayList<>();
		CompletableFuture<ReplayResult> replay = journal
			.replayContiguous(id, 1, Long.MAX_VALUE, AccountEvent.class, (event) -> seen.add(event.sequenceNr()))
			.toCompletableFuture();
		// Every round reads the clock: a few rounds in, the replay has read the (absent) mark and waits.
		await().alias("the replay waiting on 1..5 as a hole").atMost(Duration.ofSeconds(10))
			.until(() -> clock.reads.get() >= before + 6);
		assertThat(replay).isNotDone();

		// The deleteTo completes (its mark), then the wait expires.
		this.keyspace.session()
			.execute(SimpleStatement.newInstance("INSERT INTO " + this.keyspace.name() + "."
					+ journal.options().metadataTable() + "_deleted_to (persistence_id, deleted_to) VALUES (?, ?)", id,
					5L));
		clock.settable.advance(Duration.ofSeconds(61));

		ReplayResult replayed = result(replay, Duration.ofSeconds(10));
		assertThat(seen).containsExactly(6L, 7L, 8L, 9L, 10L);
		assertThat(replayed.crashGaps()).as("deleted during the wait, not a crash gap").isEmpty();
		assertThat(replayed.deleted()).isEqualTo(new SequenceRange(1, 5));
		assertThat(logsAbout(id, Level.WARN)).as("no crash-gap warning (and so no seal)").isEmpty();
	}

	/**
	 * The mark is read again before every seal, not only after a wait (finding 23, Review, item 2): a replay that
	 * read mark 1, then met the hole 2..5 with an old claim (sealed at once, no wait) used to seal it and report a
	 * crash gap, although a deleteTo(5) had completed in between.
	 */
	@Test
	void aDeleteToThatCompletesAfterTheReplayReadTheMarkIsReportedDeletedNotSealedAtOnce() {
		SettableClock clock = new SettableClock(Instant.now());
		CassandraJournalOptions options = options().withInFlightWait(Duration.ofSeconds(60)).withClock(clock);
		CassandraJournal deleter = journal(options);
		String id = "after-mark-" + UUID.randomUUID();
		result(deleter.append(id, 0, deposits(10)));
		result(deleter.deleteTo(id, 1));
		// Every claim is old now: a hole among them is settled at once, without a wait.
		clock.advance(Duration.ofSeconds(61));
		FaultInjectingSession faults = new FaultInjectingSession(this.keyspace.session());
		// The replay's first read of the mark (1) answers only after a deleteTo(5) completed.
		faults.answerAfter(FaultInjectingSession.cqlContains("SELECT deleted_to FROM"), 0,
				() -> deleter.deleteTo(id, 5));
		CassandraJournal replaying = CassandraJournal.create(faults.session(), options, new JacksonEventSerializer());

		List<Long> seen = new CopyOnWriteArrayList<>();
		ReplayResult replayed = result(replaying.replayContiguous(id, 1, Long.MAX_VALUE, AccountEvent.class,
				(event) -> seen.add(event.sequenceNr())), Duration.ofSeconds(10));
		assertThat(faults.injected()).as("the deleteTo ran between the mark read and its answer").isEqualTo(1);
		assertThat(seen).containsExactly(6L, 7L, 8L, 9L, 10L);
		assertThat(replayed.crashGaps()).as("deleted before the seal, not a crash gap").isEmpty();
		assertThat(replayed.deleted()).isEqualTo(new SequenceRange(1, 5));
		assertThat(logsAbout(id, Level.WARN)).as("no crash-gap warning (and so no seal)").isEmpty();
	}

	/**
	 * Finding 23, Review, item 4: a deleteTo without the tag index read the head once. Writer A's claim of 9..10 is
	 * in flight when the deleteTo reads the head (10); A's batch fails and A releases the claim (head 8); writer B
	 * claims 9..12 and its batch is on its way when a replay reads. The mark must not cover 9..10: B's acknowledged
	 * events are delivered once its batch lands, not skipped as deleted. Driven in order: A's claim is answered only
	 * after the deleteTo's head read has run on the node, and the replay starts while B's batch is held.
	 */
	@Test
	void aClaimReleasedAndTakenAgainDuringADeleteToIsDeliveredNotSkippedAsDeleted() {
		CassandraJournalOptions options = JournalFixture.releasing(options(), IN_FLIGHT_WAIT);
		CassandraJournal plain = journal(options);
		String id = "reclaimed-" + UUID.randomUUID();
		result(plain.append(id, 0, deposits(8)));

		FaultInjectingSession deleterFaults = new FaultInjectingSession(this.keyspace.session());
		CassandraJournal deleter = CassandraJournal.create(deleterFaults.session(), options, new JacksonEventSerializer());
		CompletableFuture<Void> headRead = new CompletableFuture<>();
		deleterFaults.answerAfter(FaultInjectingSession.cqlContains("SELECT max_sequence_nr"), 0, () -> {
			headRead.complete(null);
			return CompletableFuture.completedFuture(null);
		});

		FaultInjectingSession faultsA = new FaultInjectingSession(this.keyspace.session());
		CassandraJournal a = CassandraJournal.create(faultsA.session(), options, new JacksonEventSerializer());
		AtomicReference<CompletionStage<Void>> deletion = new AtomicReference<>();
		// A's claim of 9..10 applies; before A hears of it, the deleteTo(10) reads the head (10).
		faultsA.answerAfter(FaultInjectingSession.lightweightTransactions()
			.and(FaultInjectingSession.cqlContaining("max_sequence_nr")), 0, () -> {
				deletion.set(deleter.deleteTo(id, 10));
				return headRead;
			});
		// A's batch fails before it is sent: A releases its claim.
		faultsA.failBeforeSending((s) -> s instanceof BatchStatement, Integer.MAX_VALUE);
		assertThat(LateBatches.outcome(a.append(id, 8, deposits(2)))).isInstanceOf(JournalUnavailableException.class);
		faultsA.heal();
		assertThat(result(plain.highestSequenceNr(id))).as("A's claim released").isEqualTo(8);
		assertThat(deletion.get()).as("the deleteTo ran during A's claim").isNotNull();
		result(deletion.get(), Duration.ofSeconds(30));

		// B claims 9..12; its batch is held while a replay reads.
		FaultInjectingSession faultsB = new FaultInjectingSession(this.keyspace.session());
		CassandraJournal b = CassandraJournal.create(faultsB.session(), options, new JacksonEventSerializer());
		faultsB.delayBatches(Duration.ofSeconds(5));
		CompletionStage<AppendResult> appendB = b.append(id, 8, deposits(4));
		// Bound: B's claim is one Paxos round, not delayed.
		await().alias("B's claim of 9..12").atMost(Duration.ofSeconds(10))
			.until(() -> result(plain.highestSequenceNr(id)) == 12);
		CompletionStage<LateBatches.Replayed> replay = LateBatches.replay(plain, id);
		assertThat(appendB.toCompletableFuture()).as("the replay started while B's batch is in flight").isNotDone();

		LateBatches.Replayed replayed = result(replay, Duration.ofSeconds(15));
		assertThat(LateBatches.outcome(appendB)).as("B's append acknowledged").isNull();
		assertThat(replayed.sequenceNrs()).as("B's events, 9..10 included").containsExactly(9L, 10L, 11L, 12L);
		assertThat(replayed.result().deleted()).as("only A's predecessors were deleted").isEqualTo(new SequenceRange(1, 8));
		assertThat(replayed.result().crashGaps()).isEmpty();
	}

	/**
	 * The expected-0 variant of the test above (review of finding 23, item 4, R2): a new entity, writer A's claim of
	 * 1..2 in flight when a deleteTo(2) reads the head; A's batch fails and A releases the claim (the head row goes);
	 * the deleteTo, waiting on 1..2, reads the head again (0) and B appends 1..3 before it acts on that answer. The
	 * range has shrunk to nothing: the call must delete nothing and write no mark. It used to delete all of
	 * partition 0 ({@code partitionOf(0)} is 0, and an end of 0 looks like a whole partition) with a tombstone newer
	 * than B's acknowledged events. With and without the tag index (both paths wait in the same loop).
	 */
	@ParameterizedTest(name = "tag index {0}")
	@ValueSource(booleans = { false, true })
	void aFirstClaimReleasedDuringADeleteToLeavesTheNextAppendsEventsInPlace(boolean tagIndex) {
		CassandraJournalOptions options = JournalFixture.releasing(options(), IN_FLIGHT_WAIT).withUseTagIndex(tagIndex);
		CassandraJournal plain = journal(options);
		String id = "first-reclaimed-" + tagIndex + "-" + UUID.randomUUID();
		FaultInjectingSession deleterFaults = new FaultInjectingSession(this.keyspace.session());
		CassandraJournal deleter = CassandraJournal.create(deleterFaults.session(), options, new JacksonEventSerializer());
		CassandraJournal b = journal(options);
		CompletableFuture<Void> headRead = new CompletableFuture<>();
		CompletableFuture<Void> aReleased = new CompletableFuture<>();
		AtomicReference<CompletionStage<AppendResult>> appendB = new AtomicReference<>();
		// The deleteTo's first head read (2) is answered once A has released its claim; its next one (0, the round
		// after its wait) only after B's append of 1..3 completed.
		deleterFaults.answerAfter(FaultInjectingSession.cqlContains("SELECT max_sequence_nr"), 0, () -> {
			deleterFaults.answerAfter(FaultInjectingSession.cqlContains("SELECT max_sequence_nr"), 0, () -> {
				appendB.set(b.append(id, 0, deposits(3)));
				return appendB.get().handle((ok, error) -> null);
			});
			headRead.complete(null);
			return aReleased;
		});

		FaultInjectingSession faultsA = new FaultInjectingSession(this.keyspace.session());
		CassandraJournal a = CassandraJournal.create(faultsA.session(), options, new JacksonEventSerializer());
		AtomicReference<CompletionStage<Void>> deletion = new AtomicReference<>();
		// A's claim of 1..2 applies; before A hears of it, the deleteTo(2) reads the head (2).
		faultsA.answerAfter(FaultInjectingSession.lightweightTransactions()
			.and(FaultInjectingSession.cqlContaining("max_sequence_nr")), 0, () -> {
				deletion.set(deleter.deleteTo(id, 2));
				return headRead;
			});
		faultsA.failBeforeSending((s) -> s instanceof BatchStatement, Integer.MAX_VALUE);
		assertThat(LateBatches.outcome(a.append(id, 0, deposits(2)))).isInstanceOf(JournalUnavailableException.class);
		faultsA.heal();
		assertThat(result(plain.highestSequenceNr(id))).as("A's claim released").isEqualTo(0);
		aReleased.complete(null);
		assertThat(deletion.get()).as("the deleteTo ran during A's claim").isNotNull();

		result(deletion.get(), Duration.ofSeconds(30));
		assertThat(appendB.get()).as("B appended between the deleteTo's second head read and its answer").isNotNull();
		assertThat(LateBatches.outcome(appendB.get())).as("B's append acknowledged").isNull();
		long rows = this.keyspace.session()
			.execute(SimpleStatement.newInstance("SELECT sequence_nr FROM " + events(plain)
					+ " WHERE persistence_id = ? AND partition_nr = 0", id))
			.all()
			.size();
		assertThat(rows).as("B's events are still stored").isEqualTo(3);
		Long mark = this.keyspace.session()
			.execute(SimpleStatement.newInstance("SELECT deleted_to FROM " + this.keyspace.name() + "."
					+ options.metadataTable() + "_deleted_to WHERE persistence_id = ?", id))
			.all()
			.stream()
			.map((row) -> row.getLong(0))
			.findFirst()
			.orElse(null);
		assertThat(mark).as("no mark for a range that shrank to nothing").isNull();
		LateBatches.Replayed replayed = LateBatches.replayed(plain, id);
		assertThat(replayed.sequenceNrs()).containsExactly(1L, 2L, 3L);
		assertThat(replayed.result().deleted()).isNull();
		assertThat(replayed.result().crashGaps()).isEmpty();
	}

	/**
	 * A deleteTo over more than one partition that waits at its range's end (a claim in flight there) must not
	 * have deleted the partitions it passed while its mark, written after the wait, is not there yet: a replay
	 * during the wait met them as a hole below old events with no mark above it and sealed them as a crash gap
	 * (docs/reliability.md, finding 23, R2's open lows). Partitions of 5: 1..5 and 6..10; 1..8
	 * are old, 9..10 were claimed just now and their batch has not landed (its rows are not there). The replay of
	 * 1..8 runs while the deleteTo waits (on a settable clock, 60 s wait) and must see all eight events; once the
	 * clock passes the wait, the deleteTo completes: 9..10 stepped over, 1..10 deleted, mark 10. With and without
	 * the tag index (both paths wait in the same loop).
	 */
	@ParameterizedTest(name = "tag index {0}")
	@ValueSource(booleans = { false, true })
	void aReplayWhileADeleteToWaitsAtItsRangesEndSeesThePartitionsItPassedNotACrashGap(boolean tagIndex) {
		SettableClock settable = new SettableClock(Instant.now());
		CountingClock deleterClock = new CountingClock(settable);
		CassandraJournalOptions options = options().withInFlightWait(Duration.ofSeconds(60))
			.withPartitionSize(5)
			.withUseTagIndex(tagIndex)
			.withClock(settable);
		CassandraJournal journal = journal(options);
		CassandraJournal deleter = journal(options.withClock(deleterClock));
		String id = "passed-" + tagIndex + "-" + UUID.randomUUID();
		result(journal.append(id, 0, deposits(8)));
		settable.advance(Duration.ofSeconds(61));
		// 9..10 claimed now; their batch is still on its way (its rows are not there).
		result(journal.append(id, 8, deposits(2)));
		this.keyspace.session()
			.execute(SimpleStatement.newInstance("DELETE FROM " + events(journal)
					+ " WHERE persistence_id = ? AND partition_nr = 1 AND sequence_nr >= 9", id));

		int before = deleterClock.reads.get();
		CompletableFuture<Void> deletion = deleter.deleteTo(id, 10).toCompletableFuture();
		// Every round reads the clock: a few rounds in, the deleteTo has read both partitions and waits on 9..10.
		await().alias("the deleteTo waiting on 9..10").atMost(Duration.ofSeconds(10))
			.until(() -> deleterClock.reads.get() >= before + 6);
		assertThat(deletion).isNotDone();

		List<Long> seen = new CopyOnWriteArrayList<>();
		ReplayResult during = result(
				journal.replayContiguous(id, 1, 8, AccountEvent.class, (event) -> seen.add(event.sequenceNr())),
				Duration.ofSeconds(10));
		assertThat(seen).as("nothing is deleted before the mark").containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L);
		assertThat(during.crashGaps()).as("no partition deleted under no mark, sealed as a crash gap").isEmpty();
		assertThat(deletion).as("still waiting on 9..10").isNotDone();

		settable.advance(Duration.ofSeconds(61));
		result(deletion, Duration.ofSeconds(10));
		List<Long> after = new CopyOnWriteArrayList<>();
		ReplayResult replayed = result(journal.replayContiguous(id, 1, Long.MAX_VALUE, AccountEvent.class,
				(event) -> after.add(event.sequenceNr())), Duration.ofSeconds(10));
		assertThat(after).isEmpty();
		assertThat(replayed.deleted()).isEqualTo(new SequenceRange(1, 10));
		assertThat(replayed.crashGaps()).isEmpty();
	}

	/** The journal's clock, counting its reads (each round of a replay reads it). */
	private static final class CountingClock extends Clock {

		final SettableClock settable;

		final AtomicInteger reads = new AtomicInteger();

		CountingClock(SettableClock settable) {
			this.settable = settable;
		}

		@Override
		public long millis() {
			this.reads.incrementAndGet();
			return this.settable.millis();
		}

		@Override
		public Instant instant() {
			return Instant.ofEpochMilli(millis());
		}

		@Override
		public ZoneId getZone() {
			return this.settable.getZone();
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

	}

}
