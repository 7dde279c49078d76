package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalSchemaException;
import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.AccountEvent.Opened;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.SharedCassandra;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The journal contract and the Cassandra-specific guarantees, on a real node.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CassandraJournalIT extends JournalContract {

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	private CassandraJournal journal;

	@BeforeAll
	void createJournal(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		this.journal = CassandraJournal.create(keyspace.session(), this.options, new JacksonEventSerializer());
	}

	@Override
	protected Journal journal() {
		return this.journal;
	}

	private CqlSession session() {
		return this.keyspace.session();
	}

	@Test
	void sixteenConcurrentWritersNeverOverwriteAndLosersSeeTheWinnersHead() throws Exception {
		String id = newId();
		Map<Long, String> acknowledged = new ConcurrentHashMap<>();
		List<long[]> losses = new CopyOnWriteArrayList<>();
		runWriters(this.journal, id, 16, 20, acknowledged, losses);

		long head = result(this.journal.highestSequenceNr(id));
		assertThat(acknowledged).hasSize((int) head);
		Map<Long, String> stored = new HashMap<>();
		result(this.journal.replay(id, 1, Long.MAX_VALUE, Object.class,
				(e) -> stored.put(e.sequenceNr(), String.valueOf(((Map<?, ?>) e.payload()).get("writer")))));
		assertThat(stored.keySet()).as("contiguous sequence numbers").containsExactlyInAnyOrderElementsOf(
				java.util.stream.LongStream.rangeClosed(1, head).boxed().toList());
		assertThat(stored).as("every acknowledged event is stored, none overwritten").isEqualTo(acknowledged);
		assertThat(losses).as("the race was actually run").isNotEmpty();
		for (long[] loss : losses) {
			assertThat(loss[1]).as("a loser's head is ahead of what it expected").isGreaterThan(loss[0]);
			assertThat(acknowledged).as("a loser's head is a head some winner left").containsKey(loss[1]);
		}
	}

	@Test
	void withoutLightweightTransactionsTheSameRaceOverwritesAcknowledgedEvents() throws Exception {
		CassandraJournal unsafe = CassandraJournal.create(session(),
				this.options.withLightweightTransactions(false), new JacksonEventSerializer());
		String id = newId();
		Map<Long, String> acknowledged = new ConcurrentHashMap<>();
		AtomicInteger successes = new AtomicInteger();
		runWriters(unsafe, id, 16, 20, acknowledged, new CopyOnWriteArrayList<>(), successes);
		// Two writers that read the same head both "succeed" for the same sequence number: the journal
		// holds fewer events than were acknowledged. This is the documented unsafe mode.
		long stored = result(unsafe.checkConsistency(id)).storedEvents();
		assertThat(successes.get()).as("acknowledged appends").isGreaterThan((int) stored);
	}

	private static void runWriters(Journal journal, String id, int writers, int appendsEach,
			Map<Long, String> acknowledged, List<long[]> losses) throws Exception {
		runWriters(journal, id, writers, appendsEach, acknowledged, losses, new AtomicInteger());
	}

	private static void runWriters(Journal journal, String id, int writers, int appendsEach,
			Map<Long, String> acknowledged, List<long[]> losses, AtomicInteger successes) throws Exception {
		ExecutorService pool = Executors.newFixedThreadPool(writers);
		try {
			List<Future<?>> futures = new ArrayList<>();
			for (int w = 0; w < writers; w++) {
				String writer = "w" + w;
				futures.add(pool.submit(() -> {
					int done = 0;
					while (done < appendsEach) {
						long expected = result(journal.highestSequenceNr(id));
						try {
							AppendResult r = result(journal.append(id, expected,
									List.of(EventToAppend.of(Map.of("writer", writer + "-" + done)))));
							acknowledged.put(r.lastSequenceNr(), writer + "-" + done);
							successes.incrementAndGet();
							done++;
						}
						catch (JournalConcurrencyException ex) {
							losses.add(new long[] { ex.expectedSequenceNr(), ex.actualSequenceNr() });
						}
					}
					return null;
				}));
			}
			for (Future<?> future : futures) {
				future.get(5, TimeUnit.MINUTES);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void partitionSizeThreeSpreadsTenEventsOverFourPartitions() {
		CassandraJournal small = CassandraJournal.create(session(), this.options.withPartitionSize(3),
				new JacksonEventSerializer());
		String id = newId();
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 1; i <= 10; i++) {
			events.add(EventToAppend.of(new Deposited(i)));
		}
		result(small.append(id, 0, events.subList(0, 4)));
		result(small.append(id, 4, events.subList(4, 10)));
		PreparedStatement rows = session().prepare("SELECT sequence_nr FROM events WHERE persistence_id = ? AND partition_nr = ?");
		Map<Long, List<Long>> byPartition = new HashMap<>();
		for (long p = 0; p < 5; p++) {
			List<Long> seqs = session().execute(rows.bind(id, p)).all().stream().map((r) -> r.getLong(0)).toList();
			if (!seqs.isEmpty()) {
				byPartition.put(p, seqs);
			}
		}
		assertThat(byPartition).containsOnlyKeys(0L, 1L, 2L, 3L);
		assertThat(byPartition.get(0L)).containsExactly(1L, 2L, 3L);
		assertThat(byPartition.get(3L)).containsExactly(10L);
		assertThat(replayAll(small, id)).extracting(PersistentEvent::sequenceNr)
			.containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
		List<Long> middle = new ArrayList<>();
		result(small.replay(id, 3, 7, AccountEvent.class, (e) -> middle.add(e.sequenceNr())));
		assertThat(middle).containsExactly(3L, 4L, 5L, 6L, 7L);
	}

	@Test
	void aFailedBatchReleasesTheClaimSoTheSameAppendCanBeRetried() {
		// Failed before sending: certainly not applied, so the claim can be released. (A timeout after
		// sending may have applied: the claim stays, see AppendFaultsIT.)
		FaultInjectingSession faults = new FaultInjectingSession(session());
		CassandraJournal faulty = CassandraJournal.create(faults.session(), this.options, new JacksonEventSerializer());
		String id = newId();
		result(faulty.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.failBeforeSending(BatchStatement.class::isInstance, Integer.MAX_VALUE);
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(faulty.append(id, 1, List.of(EventToAppend.of(new Deposited(7))))))
			.withMessageContaining(id);
		faults.heal();
		assertThat(result(faulty.highestSequenceNr(id))).as("claim released").isEqualTo(1);
		result(faulty.append(id, 1, List.of(EventToAppend.of(new Deposited(7)))));
		assertThat(replayAll(faulty, id)).extracting(PersistentEvent::payload)
			.containsExactly(new Opened(), new Deposited(7));

		String fresh = newId();
		faults.failBeforeSending(BatchStatement.class::isInstance, Integer.MAX_VALUE);
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(faulty.append(fresh, 0, List.of(EventToAppend.of(new Opened())))));
		faults.heal();
		result(faulty.append(fresh, 0, List.of(EventToAppend.of(new Opened()))));
		assertThat(replayAll(faulty, fresh)).hasSize(1);
	}

	@Test
	void aCrashBetweenClaimAndBatchLeavesAGapTheCheckReportsAndTheNextAppendContinues() {
		FaultInjectingSession faults = new FaultInjectingSession(session());
		CassandraJournal faulty = CassandraJournal.create(faults.session(), this.options, new JacksonEventSerializer());
		String id = newId();
		result(faulty.append(id, 0, List.of(EventToAppend.of(new Opened()), EventToAppend.of(new Deposited(1)))));

		faults.failEverythingButTheClaim();
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(faulty.append(id, 2, List.of(EventToAppend.of(new Deposited(2)),
					EventToAppend.of(new Deposited(3))))));
		faults.heal();
		assertThat(faults.injected()).as("batch and release both failed").isGreaterThanOrEqualTo(2);

		ConsistencyReport report = result(faulty.checkConsistency(id));
		assertThat(report.hasGap()).isTrue();
		assertThat(report.head()).isEqualTo(4);
		assertThat(report.highestStored()).isEqualTo(2);
		assertThat(report.missing()).containsExactly(new ConsistencyReport.SequenceRange(3, 4));

		long head = result(faulty.highestSequenceNr(id));
		result(faulty.append(id, head, List.of(EventToAppend.of(new Deposited(5)))));
		assertThat(replayAll(faulty, id)).extracting(PersistentEvent::sequenceNr).containsExactly(1L, 2L, 5L);
		assertThat(result(faulty.checkConsistency(id)).missing())
			.containsExactly(new ConsistencyReport.SequenceRange(3, 4));

		List<ConsistencyReport> gaps = new CopyOnWriteArrayList<>();
		long checked = result(faulty.checkConsistencyOfAll(gaps::add));
		assertThat(checked).isGreaterThan(1);
		assertThat(gaps).extracting(ConsistencyReport::persistenceId).contains(id);
		assertThat(gaps).allSatisfy((gap) -> assertThat(gap.hasGap()).isTrue());
	}

	@Test
	void spreadsPersistenceIdsOverBucketsAndStillListsReferenceRows() {
		CassandraJournal bucketed = CassandraJournal.create(session(), this.options.withPersistenceIdBuckets(4),
				new JacksonEventSerializer());
		String prefix = "bucketed-" + System.nanoTime() + "-";
		for (int i = 0; i < 12; i++) {
			result(bucketed.append(prefix + i, 0, List.of(EventToAppend.of(new Opened()))));
		}
		session().execute("INSERT INTO all_persistence_ids (tag, persistence_id) VALUES ('_all', ?)", prefix + "ts");
		List<String> buckets = session().execute("SELECT tag FROM all_persistence_ids WHERE tag IN "
				+ "('_all/0', '_all/1', '_all/2', '_all/3')").all().stream().map((r) -> r.getString(0)).distinct().toList();
		assertThat(buckets).hasSizeGreaterThan(1);
		List<String> listed = new ArrayList<>();
		String after = null;
		List<String> page;
		do {
			page = result(bucketed.persistenceIds(after, 5));
			page.stream().filter((id) -> id.startsWith(prefix)).forEach(listed::add);
			after = page.isEmpty() ? after : page.get(page.size() - 1);
		}
		while (page.size() == 5);
		assertThat(listed).hasSize(13).contains(prefix + "ts").isSortedAccordingTo(String::compareTo);
	}

	@Test
	void rejectsIdentifiersThatAreNotPlainCqlNames() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> CassandraJournalOptions.create().withEventsTable("events; DROP TABLE x"))
			.withMessageContaining("eventsTable")
			.withMessageContaining("plain CQL identifier");
		assertThatIllegalArgumentException().isThrownBy(() -> CassandraJournalOptions.create().withKeyspace("\"quoted\""))
			.withMessageContaining("keyspace");
		assertThatIllegalArgumentException().isThrownBy(() -> CassandraJournalOptions.create().withMetadataTable("select"))
			.withMessageContaining("reserved");
		assertThatIllegalArgumentException().isThrownBy(() -> CassandraJournalOptions.create().withPartitionSize(0))
			.withMessageContaining("partitionSize");
		assertThat(session().execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?",
				this.keyspace.name()).all()).extracting((r) -> r.getString(0)).doesNotContain("x");
	}

	@Test
	void defaultOptionsWorkOnAFreshKeyspaceWithoutATagIndexTable() {
		String fresh = io.cassandrajournal.testsupport.SharedCassandra.createKeyspace("fresh");
		CassandraJournal plain = CassandraJournal.create(session(), CassandraJournalOptions.create().withKeyspace(fresh),
				new JacksonEventSerializer());
		String id = newId();
		result(plain.append(id, 0, List.of(EventToAppend.of(new Opened(), "account"))));
		assertThat(replayAll(plain, id)).hasSize(1);
		assertThat(session().execute("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?", fresh).all())
			.extracting((r) -> r.getString(0))
			.containsExactlyInAnyOrder("events", "metadata", "all_persistence_ids", "metadata_deleted_to");
	}

	@Test
	void failsClearlyWhenTheKeyspaceOrATableIsMissing() {
		assertThatExceptionOfType(JournalSchemaException.class)
			.isThrownBy(() -> CassandraJournal.create(session(),
					CassandraJournalOptions.create().withKeyspace("no_such_keyspace"), new JacksonEventSerializer()))
			.withMessageContaining("Keyspace 'no_such_keyspace' does not exist")
			.withMessageContaining("CREATE KEYSPACE");
		assertThatExceptionOfType(JournalSchemaException.class)
			.isThrownBy(() -> CassandraJournal.create(session(),
					this.options.withEventsTable("other_events").withAutoCreateTables(false), new JacksonEventSerializer()))
			.withMessageContaining(this.keyspace.name() + ".other_events does not exist")
			.withMessageContaining("auto-create-tables");
	}

	@Test
	void failsClearlyWhenATableHasAnotherShape() {
		session().execute("CREATE TABLE wrong_events (persistence_id text, partition_nr bigint, sequence_nr int, "
				+ "payload text, PRIMARY KEY ((persistence_id, partition_nr), sequence_nr))");
		assertThatExceptionOfType(JournalSchemaException.class)
			.isThrownBy(() -> CassandraJournal.create(session(), this.options.withEventsTable("wrong_events"),
					new JacksonEventSerializer()))
			.withMessageContaining("sequence_nr int (clustering asc) should be sequence_nr bigint")
			.withMessageContaining("missing column timestamp bigint")
			.withMessageContaining("missing column tags set<text>");
	}

	@Test
	void tablesMatchTheReferenceCql() {
		Map<String, String> columns = new HashMap<>();
		for (Row row : session().execute("SELECT table_name, column_name, type, kind, position, clustering_order "
				+ "FROM system_schema.columns WHERE keyspace_name = ?", this.keyspace.name())) {
			columns.put(row.getString("table_name") + "." + row.getString("column_name"), row.getString("type") + " "
					+ row.getString("kind") + " " + row.getInt("position") + " " + row.getString("clustering_order"));
		}
		assertThat(columns).containsEntry("events.persistence_id", "text partition_key 0 none")
			.containsEntry("events.partition_nr", "bigint partition_key 1 none")
			.containsEntry("events.sequence_nr", "bigint clustering 0 asc")
			.containsEntry("events.timestamp", "bigint regular -1 none")
			.containsEntry("events.payload", "text regular -1 none")
			.containsEntry("events.tags", "set<text> regular -1 none")
			.containsEntry("metadata.persistence_id", "text partition_key 0 none")
			.containsEntry("metadata.max_sequence_nr", "bigint regular -1 none")
			.containsEntry("metadata.updated_at", "bigint regular -1 none")
			.containsEntry("all_persistence_ids.tag", "text partition_key 0 none")
			.containsEntry("all_persistence_ids.persistence_id", "text clustering 0 asc")
			.containsEntry("events_by_tag.tag", "text partition_key 0 none")
			.containsEntry("events_by_tag.timestamp", "bigint clustering 0 asc")
			.containsEntry("events_by_tag.persistence_id", "text clustering 1 asc")
			.containsEntry("events_by_tag.sequence_nr", "bigint clustering 2 asc")
			.containsEntry("events_by_tag.payload", "text regular -1 none")
			.containsEntry("events_by_tag.tags", "set<text> regular -1 none");
	}

	@Test
	void replaysRowsWrittenWithTheReferenceImplementationsStatements() {
		// Exactly the statements of the TypeScript implementation: claim, events, all ids.
		String id = "account-ts-" + System.nanoTime();
		CqlSession s = session();
		assertThat(s.execute(s.prepare("INSERT INTO metadata (persistence_id, max_sequence_nr, updated_at) VALUES (?, ?, ?) "
				+ "IF NOT EXISTS").bind(id, 3L, 1_700_000_000_000L)).wasApplied()).isTrue();
		PreparedStatement insert = s.prepare("INSERT INTO events (persistence_id, partition_nr, sequence_nr, timestamp, "
				+ "payload, tags) VALUES (?, ?, ?, ?, ?, ?)");
		s.execute(insert.bind(id, 0L, 1L, 1_700_000_000_000L, "{\"kind\":\"opened\"}", Set.of("account")));
		s.execute(insert.bind(id, 0L, 2L, 1_700_000_000_000L, "{\"kind\":\"deposited\",\"amount\":5}", Set.of("account")));
		s.execute(insert.bind(id, 0L, 3L, 1_700_000_000_001L, "{\"amount\":2,\"kind\":\"withdrawn\"}", Set.of("account")));
		s.execute(s.prepare("INSERT INTO all_persistence_ids (tag, persistence_id) VALUES (?, ?)").bind("_all", id));

		assertThat(replayAll(this.journal, id)).extracting(PersistentEvent::payload)
			.containsExactly(new Opened(), new Deposited(5), new AccountEvent.Withdrawn(2));
		result(this.journal.append(id, 3, List.of(EventToAppend.of(new Deposited(1), "account"))));
		Row written = s.execute(s.prepare("SELECT payload, partition_nr FROM events WHERE persistence_id = ? AND "
				+ "partition_nr = 0 AND sequence_nr = 4").bind(id)).one();
		assertThat(written.getString("payload")).isEqualTo("{\"kind\":\"deposited\",\"amount\":1}");
	}

	@Test
	void readsEveryPageOfALongStream() {
		CassandraJournal paged = CassandraJournal.create(session(), this.options.withPageSize(100).withPartitionSize(1000),
				new JacksonEventSerializer());
		String id = newId();
		long head = 0;
		for (int batch = 0; batch < 25; batch++) {
			List<EventToAppend> events = new ArrayList<>();
			for (int i = 0; i < 100; i++) {
				events.add(EventToAppend.of(new Deposited(1)));
			}
			head = result(paged.append(id, head, events)).lastSequenceNr();
		}
		AtomicInteger count = new AtomicInteger();
		long last = result(paged.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> count.incrementAndGet()));
		assertThat(count.get()).isEqualTo(2500);
		assertThat(last).isEqualTo(2500);
	}

	@Test
	void unknownPersistenceIdsAreListedInTheReferenceBucket() {
		String id = newId();
		result(this.journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));
		assertThat(session().execute("SELECT persistence_id FROM all_persistence_ids WHERE tag = '_all' AND persistence_id = ?",
				id).one()).isNotNull();
		assertThat(SharedCassandra.datacenter()).isEqualTo("datacenter1");
	}

}
