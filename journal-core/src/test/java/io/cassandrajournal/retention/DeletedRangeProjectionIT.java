package io.cassandrajournal.retention;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.entity.EventsDeletedException;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionState;
import io.cassandrajournal.projection.ProjectionStatus;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.DepositBalance;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.JournalLogs;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A projection whose cursor is behind a range a cleanup deleted (issue 18 part 2, "reports it instead of stalling";
 * docs/reliability.md, finding 19):
 * <ul>
 * <li>by persistenceId: the contiguous replay reads {@code deleteTo}'s mark and takes the numbers up to it as
 * deleted, not in flight: no wait, no crash-gap warning, no seal; the projection reports the range (status, one
 * INFO line);</li>
 * <li>by tag, a dropped bucket: the drop records how far it dropped, and a projection whose cursor lies before that
 * reports "events before X were dropped" (status, one INFO line), still delivering the kept events;</li>
 * <li>an entity load that would fold a state without deleted events fails, naming the entity and the range,
 * unless a snapshot covers it.</li>
 * </ul>
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeletedRangeProjectionIT {

	/** Long, so that a replay that took the deleted numbers for an append in flight would be seen waiting. */
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

	private static List<EventToAppend> deposits(int count, String tag) {
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			events.add(EventToAppend.of(new Deposited(1), tag));
		}
		return events;
	}

	private ProjectionEngine engine(CassandraJournal journal, CassandraJournalOptions options) {
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		return ProjectionEngine.builder(journal)
			.readJournal(CassandraReadJournal.create(journal, this.keyspace.session(), options, serializer))
			.offsetStore(new DurableStateOffsetStore(
					CassandraDurableStateStore.create(this.keyspace.session(), options, serializer)))
			.build();
	}

	private CassandraJournal journal() {
		return CassandraJournal.create(this.keyspace.session(),
				CassandraJournalOptions.create().withKeyspace(this.keyspace.name()).withInFlightWait(IN_FLIGHT_WAIT),
				new JacksonEventSerializer());
	}

	@Test
	void aPersistenceIdProjectionBehindADeletedRangeStepsOverItAtOnceAndReportsIt() {
		CassandraJournal journal = journal();
		String id = "behind-" + UUID.randomUUID();
		List<Long> handled = new CopyOnWriteArrayList<>();
		Projection<AccountEvent> projection = Projection.byPersistenceId("behind", id, AccountEvent.class,
				EventHandler.blocking((event) -> handled.add(event.sequenceNr())), ProjectionSettings.defaults());
		result(journal.append(id, 0, deposits(3, "t")));
		try (ProjectionEngine engine = engine(journal, journal.options())) {
			ProjectionControl control = engine.register(projection);
			result(control.start());
			await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 3);
			result(control.stop());
		}
		result(journal.append(id, 3, deposits(12, "t")));
		result(journal.deleteTo(id, 10));

		try (ProjectionEngine engine = engine(journal, journal.options())) {
			ProjectionControl control = engine.register(projection);
			result(control.start());
			// Not the in-flight wait of 20 s after event 11's claim: the deleted numbers are not waited for.
			await().alias("events after the deleted range, well within the in-flight wait")
				.atMost(Duration.ofSeconds(10))
				.until(() -> handled.size() == 3 + 5);
			assertThat(handled).containsExactly(1L, 2L, 3L, 11L, 12L, 13L, 14L, 15L);
			assertThat(control.status().state()).isEqualTo(ProjectionState.RUNNING);
			assertThat(control.status().deleted())
				.isEqualTo(ProjectionStatus.DeletedEvents.byPersistenceId(id, new SequenceRange(4, 10)));
		}
		assertThat(logsAbout(id, Level.WARN)).as("no crash-gap warning (and so no seal) for a deleted range").isEmpty();
		assertThat(logsAbout(id, Level.INFO)).filteredOn((e) -> e.getFormattedMessage().contains("deleted"))
			.singleElement()
			.satisfies((e) -> assertThat(e.getFormattedMessage()).contains("'behind'").contains("4..10"));
	}

	@Test
	void aTagProjectionBehindADroppedBucketReportsIt() {
		SettableClock clock = new SettableClock(Instant.parse("2026-02-01T08:00:10Z"));
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(this.keyspace.name())
			.withUseTagIndex(true).withTagBucketing(TagBucketing.MINUTE).withClock(clock);
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), options, new JacksonEventSerializer());
		JournalCleanup cleanup = JournalCleanup.create(this.keyspace.session(), journal);
		String tag = "dropped-" + System.nanoTime();
		String id = "dropped-" + UUID.randomUUID();
		List<Long> handled = new CopyOnWriteArrayList<>();
		Projection<AccountEvent> projection = Projection.byTag("dropped", TagFilter.tag(tag), AccountEvent.class,
				EventHandler.blocking((event) -> handled.add(event.sequenceNr())), ProjectionSettings.defaults()
					.withFeed(ProjectionSettings.defaults().feed().withBacktrackWindow(Duration.ZERO)));
		result(journal.append(id, 0, deposits(2, tag)));
		try (ProjectionEngine engine = engine(journal, options)) {
			ProjectionControl control = engine.register(projection);
			result(control.start());
			await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 2);
			result(control.stop());
		}
		clock.advance(Duration.ofMinutes(1));
		result(journal.append(id, 2, deposits(2, tag)));
		clock.advance(Duration.ofMinutes(1));
		result(journal.append(id, 4, deposits(2, tag)));
		result(cleanup.dropTagBucketsBefore(Instant.parse("2026-02-01T08:02:00Z")));

		try (ProjectionEngine engine = engine(journal, options)) {
			ProjectionControl control = engine.register(projection);
			result(control.start());
			await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 4);
			assertThat(handled).containsExactly(1L, 2L, 5L, 6L);
			assertThat(control.status().state()).isEqualTo(ProjectionState.RUNNING);
			await().alias("the dropped range reported").atMost(Duration.ofSeconds(10))
				.until(() -> !logsAbout(tag, Level.INFO).isEmpty());
			assertThat(control.status().deleted())
				.isEqualTo(ProjectionStatus.DeletedEvents.byTag(tag, Instant.parse("2026-02-01T08:02:00Z")));
		}
		assertThat(logsAbout(tag, Level.INFO)).singleElement()
			.satisfies((e) -> assertThat(e.getFormattedMessage()).contains("'dropped'")
				.contains("before 2026-02-01T08:02:00Z")
				.contains("dropped"));
	}

	@Test
	void aTagProjectionPastTheDroppedRangeReportsNothing() {
		SettableClock clock = new SettableClock(Instant.parse("2026-03-01T08:00:10Z"));
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(this.keyspace.name())
			.withUseTagIndex(true).withTagBucketing(TagBucketing.MINUTE).withClock(clock);
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), options, new JacksonEventSerializer());
		JournalCleanup cleanup = JournalCleanup.create(this.keyspace.session(), journal);
		String tag = "caught-up-" + System.nanoTime();
		String id = "caught-up-" + UUID.randomUUID();
		List<Long> handled = new CopyOnWriteArrayList<>();
		Projection<AccountEvent> projection = Projection.byTag("caught-up", TagFilter.tag(tag), AccountEvent.class,
				EventHandler.blocking((event) -> handled.add(event.sequenceNr())), ProjectionSettings.defaults()
					.withFeed(ProjectionSettings.defaults().feed().withBacktrackWindow(Duration.ZERO)));
		result(journal.append(id, 0, deposits(2, tag)));
		clock.advance(Duration.ofMinutes(2));
		result(journal.append(id, 2, deposits(2, tag)));
		try (ProjectionEngine engine = engine(journal, options)) {
			ProjectionControl control = engine.register(projection);
			result(control.start());
			await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 4);
			result(control.stop());
		}
		result(cleanup.dropTagBucketsBefore(Instant.parse("2026-03-01T08:01:00Z")));
		try (ProjectionEngine engine = engine(journal, options)) {
			ProjectionControl control = engine.register(projection);
			result(control.start());
			result(journal.append(id, 4, deposits(1, tag)));
			await().atMost(Duration.ofSeconds(30)).until(() -> handled.size() == 5);
			assertThat(control.status().deleted()).isNull();
		}
		assertThat(logsAbout(tag, Level.INFO)).as("a cursor past the dropped range: nothing to report").isEmpty();
	}

	@Test
	void anEntityLoadThatWouldFoldWithoutDeletedEventsFailsNamingTheRange() {
		CassandraJournal journal = journal();
		String id = "load-" + UUID.randomUUID();
		result(journal.append(id, 0, deposits(15, "t")));
		result(journal.deleteTo(id, 10));
		EntityRepository<Long, AccountEvent> repository = EntityRepository
			.create(journal, null, new DepositBalance(0), 0);
		assertThatThrownBy(() -> result(repository.load(id), Duration.ofSeconds(10)))
			.isInstanceOf(EventsDeletedException.class)
			.hasMessageContaining(id)
			.hasMessageContaining("1..10")
			.hasMessageContaining("deleted");
	}

	@Test
	void anEntityLoadFromASnapshotThatCoversTheDeletedRangeFolds() {
		CassandraJournal journal = journal();
		CassandraSnapshotStore snapshots = CassandraSnapshotStore.create(this.keyspace.session(), journal.options(),
				new JacksonEventSerializer());
		String id = "covered-" + UUID.randomUUID();
		EntityRepository<Long, AccountEvent> repository = EntityRepository
			.create(journal, snapshots, new DepositBalance(5), 0);
		for (int i = 0; i < 12; i++) {
			result(repository.execute(id, (state) -> List.of(new Deposited(1))));
		}
		await().alias("the snapshot at 10 saved").atMost(Duration.ofSeconds(10))
			.until(() -> result(snapshots.loadLatest(id, Long.MAX_VALUE, Long.class))
				.map((s) -> s.sequenceNr() == 10)
				.orElse(false));
		result(journal.deleteTo(id, 10));
		EntityRepository<Long, AccountEvent> fresh = EntityRepository
			.create(journal, snapshots, new DepositBalance(5), 0);
		assertThat(result(fresh.load(id), Duration.ofSeconds(10)).state()).isEqualTo(12L);
	}

}
