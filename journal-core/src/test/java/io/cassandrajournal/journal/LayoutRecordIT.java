package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalLayoutMismatchException;
import io.cassandrajournal.JournalSchemaException;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.SharedCassandra;
import io.cassandrajournal.testsupport.TestKeyspace;
import io.cassandrajournal.testsupport.TestSessions;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The layout record on a real node: recorded on the first start, the same settings start again, different ones
 * are refused naming each setting with both values, two concurrent first starts agree on one record, and a
 * journal that already has events gets a record and a warning. Each test uses its own events table, so its own
 * record.
 */
@CassandraTest
class LayoutRecordIT {

	private static CassandraJournalOptions options(TestKeyspace keyspace, String events) {
		return CassandraJournalOptions.create().withKeyspace(keyspace.name()).withEventsTable(events);
	}

	@Test
	void theSameSettingsStartAgainAndDifferentOnesAreRefusedNamingBothValues(TestKeyspace keyspace) {
		CassandraJournalOptions first = options(keyspace, "same_events").withUseTagIndex(true).withPartitionSize(1000);
		CassandraJournal.verifyLayout(keyspace.session(), first);
		CassandraJournal.verifyLayout(keyspace.session(), first);
		CassandraJournal.verifyLayout(keyspace.session(), first.withPageSize(7).withConsistency(
				com.datastax.oss.driver.api.core.DefaultConsistencyLevel.ONE));

		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(),
					first.withUseTagIndex(false).withPartitionSize(500).withPersistenceIdBuckets(4)))
			.satisfies((ex) -> {
				assertThat(ex.table()).isEqualTo(keyspace.name() + ".same_events_layout");
				assertThat(ex.mismatches()).containsExactly(
						new JournalLayoutMismatchException.Mismatch("use-tag-index", "true", "false"),
						new JournalLayoutMismatchException.Mismatch("tag-index-table", "events_by_tag", ""),
						new JournalLayoutMismatchException.Mismatch("partition-size", "1000", "500"),
						new JournalLayoutMismatchException.Mismatch("persistence-id-buckets", "1", "4"));
				assertThat(ex.getMessage()).contains("partition-size was recorded as 1000, this instance has 500");
			});
		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), first.withTagBucketing(TagBucketing.DAY)))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("tag-bucketing", "NONE", "DAY")));
		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), first.withTagSliceGroups(16)))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("tag-slice-groups", "0", "16")));
	}

	@Test
	void twoConcurrentFirstStartsAgreeOnOneRecord(TestKeyspace keyspace) throws Exception {
		// Settle the table first: the race is about the record, not about CREATE TABLE.
		CassandraJournal.verifyLayout(keyspace.session(), options(keyspace, "race_warmup"));
		for (int round = 0; round < 5; round++) {
			CassandraJournalOptions a = options(keyspace, "race" + round + "_events").withPartitionSize(100);
			CassandraJournalOptions b = a.withPartitionSize(200);
			keyspace.session().execute("CREATE TABLE IF NOT EXISTS " + keyspace.name() + ".race" + round
					+ "_events_layout (id text PRIMARY KEY, settings map<text, text>, recorded_at timestamp)");
			CountDownLatch go = new CountDownLatch(1);
			ExecutorService pool = Executors.newFixedThreadPool(2);
			try {
				List<Future<String>> starts = new ArrayList<>();
				for (CassandraJournalOptions options : List.of(a, b)) {
					Callable<String> start = () -> {
						go.await();
						try {
							CassandraJournal.verifyLayout(keyspace.session(), options);
							return "started";
						}
						catch (JournalLayoutMismatchException ex) {
							return "refused";
						}
					};
					starts.add(pool.submit(start));
				}
				go.countDown();
				List<String> outcomes = new ArrayList<>();
				for (Future<String> start : starts) {
					outcomes.add(start.get(30, TimeUnit.SECONDS));
				}
				assertThat(outcomes).as("round " + round + ": exactly one of two different first starts wins")
					.containsExactlyInAnyOrder("started", "refused");
				Row record = keyspace.session()
					.execute("SELECT settings FROM " + keyspace.name() + ".race" + round
							+ "_events_layout WHERE id = 'layout'")
					.one();
				String winner = (outcomes.get(0).equals("started")) ? "100" : "200";
				assertThat(record.getMap("settings", String.class, String.class)).containsEntry("partition-size", winner);
			}
			finally {
				pool.shutdownNow();
			}
		}
	}

	/**
	 * Review S1 of the segment-aware tag index: a record written before {@code tag-slice-groups} existed lacks the
	 * key; every start used to take it as configured and never record it, so instances with 0, 16 and 32 ran side
	 * by side (16 and 32 write different tables, 0 writes none: segment feeds miss events). Its absence means what
	 * the older version did, 0 (no sliced copies): that value is added, so a start with 16 (the first instance of a
	 * rolling upgrade, while the old ones keep writing no sliced copies) is refused, and one with 0 starts (review
	 * of S1: the first start used to record its own 16).
	 */
	@Test
	void aRecordLackingTagSliceGroupsHoldsZeroAndRefusesAStartWithSixteen(TestKeyspace keyspace) {
		CassandraJournalOptions sliced16 = options(keyspace, "old_record_events").withUseTagIndex(true)
			.withTagSliceGroups(16);
		recordWithout(keyspace, "old_record_events", sliced16, "tag-slice-groups");

		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), sliced16))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("tag-slice-groups", "0", "16")));

		assertThat(recorded(keyspace, "old_record_events")).as("the value the older version wrote with")
			.containsEntry("tag-slice-groups", "0")
			.containsAllEntriesOf(LayoutRecord.layout(sliced16.withTagSliceGroups(0)));
		CassandraJournal.verifyLayout(keyspace.session(), sliced16.withTagSliceGroups(0));
		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), sliced16.withTagSliceGroups(32)))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("tag-slice-groups", "0", "32")));
	}

	/**
	 * Review of S1: the lightweight transaction adding a missing setting timed out on the server although it
	 * applied (the outcome of a CAS write timeout is unknown); the start used to fail. It now reads the record again
	 * (a serial read, which completes a pending proposal) and compares.
	 */
	@Test
	void anAdditionWhoseOutcomeIsUnknownIsReadBackInsteadOfFailingTheStart(TestKeyspace keyspace) {
		CassandraJournalOptions options = options(keyspace, "unknown_add_events").withPersistenceIdBuckets(3);
		recordWithout(keyspace, "unknown_add_events", options, "persistence-id-buckets");
		FaultInjectingSession faults = new FaultInjectingSession(keyspace.session());
		faults.applyThenTimeOut(FaultInjectingSession.cqlContaining("SET settings = settings +"), 1);

		CassandraJournal.verifyLayout(faults.session(), options);

		assertThat(faults.injected()).isEqualTo(1);
		assertThat(recorded(keyspace, "unknown_add_events")).isEqualTo(LayoutRecord.layout(options));
	}

	@Test
	void aRecordLackingSeveralSettingsGetsThemAllAndKeepsTheOthers(TestKeyspace keyspace) {
		CassandraJournalOptions options = options(keyspace, "partial_record_events").withPartitionSize(300);
		recordWithout(keyspace, "partial_record_events", options, "tag-slice-groups", "persistence-id-buckets");
		// A value the record holds still decides: this instance differs in it, so nothing is added.
		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), options.withPartitionSize(400)))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("partition-size", "300", "400")));
		assertThat(recorded(keyspace, "partial_record_events")).doesNotContainKeys("tag-slice-groups",
				"persistence-id-buckets");

		CassandraJournal.verifyLayout(keyspace.session(), options.withPersistenceIdBuckets(3));

		assertThat(recorded(keyspace, "partial_record_events")).isEqualTo(
				LayoutRecord.layout(options.withPersistenceIdBuckets(3)));
		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), options))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("persistence-id-buckets", "3", "1")));
	}

	@Test
	void twoConcurrentStartsAddingAMissingSettingAgreeOnOneValue(TestKeyspace keyspace) throws Exception {
		for (int round = 0; round < 5; round++) {
			String events = "add_race" + round + "_events";
			// A setting without an implied value (tag-slice-groups has one: 0, added whatever the start has).
			CassandraJournalOptions a = options(keyspace, events).withPersistenceIdBuckets(2);
			CassandraJournalOptions b = a.withPersistenceIdBuckets(3);
			recordWithout(keyspace, events, a, "persistence-id-buckets");
			List<String> outcomes = startConcurrently(keyspace, List.of(a, b));
			assertThat(outcomes).as("round " + round + ": exactly one of two starts adding different values wins")
				.containsExactlyInAnyOrder("started", "refused");
			String winner = (outcomes.get(0).equals("started")) ? "2" : "3";
			assertThat(recorded(keyspace, events)).containsEntry("persistence-id-buckets", winner);
		}
	}

	/**
	 * Writes the record an older version wrote: this layout without {@code missing}, in a table of its own.
	 */
	private static void recordWithout(TestKeyspace keyspace, String events, CassandraJournalOptions options,
			String... missing) {
		Map<String, String> settings = new java.util.LinkedHashMap<>(LayoutRecord.layout(options));
		for (String key : missing) {
			assertThat(settings.remove(key)).as(key).isNotNull();
		}
		keyspace.session().execute("CREATE TABLE IF NOT EXISTS " + keyspace.name() + "." + events
				+ "_layout (id text PRIMARY KEY, settings map<text, text>, recorded_at timestamp)");
		keyspace.session().execute(com.datastax.oss.driver.api.core.cql.SimpleStatement.newInstance("INSERT INTO "
				+ keyspace.name() + "." + events + "_layout (id, settings, recorded_at) VALUES ('layout', ?, "
				+ "toTimestamp(now()))", settings));
	}

	private static Map<String, String> recorded(TestKeyspace keyspace, String events) {
		return keyspace.session()
			.execute("SELECT settings FROM " + keyspace.name() + "." + events + "_layout WHERE id = 'layout'")
			.one()
			.getMap("settings", String.class, String.class);
	}

	/** @return "started" or "refused" per start, in the order given */
	private static List<String> startConcurrently(TestKeyspace keyspace, List<CassandraJournalOptions> starts)
			throws Exception {
		CountDownLatch go = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(starts.size());
		try {
			List<Future<String>> running = new ArrayList<>();
			for (CassandraJournalOptions options : starts) {
				Callable<String> start = () -> {
					go.await();
					try {
						CassandraJournal.verifyLayout(keyspace.session(), options);
						return "started";
					}
					catch (JournalLayoutMismatchException ex) {
						return "refused";
					}
				};
				running.add(pool.submit(start));
			}
			go.countDown();
			List<String> outcomes = new ArrayList<>();
			for (Future<String> start : running) {
				outcomes.add(start.get(30, TimeUnit.SECONDS));
			}
			return outcomes;
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void aJournalWithEventsButNoRecordGetsOneAndAWarning(TestKeyspace keyspace) {
		// The function set: left unset on a journal with events but no record, the start is refused (below).
		CassandraJournalOptions options = options(keyspace, "legacy_events").withPersistenceIdBuckets(2)
			.withSliceHash(SliceHash.MURMUR3);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		result(journal.append("legacy-1", 0, List.of(EventToAppend.of(new Deposited(1)))));
		ListAppender<ILoggingEvent> logs = new ListAppender<>();
		logs.start();
		Logger logger = (Logger) LoggerFactory.getLogger(LayoutRecord.class);
		logger.addAppender(logs);
		try {
			CassandraJournal.verifyLayout(keyspace.session(), options);
		}
		finally {
			logger.detachAppender(logs);
		}
		assertThat(logs.list).filteredOn((e) -> e.getLevel() == Level.WARN)
			.singleElement()
			.satisfies((e) -> assertThat(e.getFormattedMessage()).contains("has events but no layout record")
				.contains("persistence-id-buckets=2"));
		Map<String, String> recorded = keyspace.session()
			.execute("SELECT settings FROM " + keyspace.name() + ".legacy_events_layout WHERE id = 'layout'")
			.one()
			.getMap("settings", String.class, String.class);
		assertThat(recorded).containsEntry("persistence-id-buckets", "2").containsEntry("use-tag-index", "false");
		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), options.withPersistenceIdBuckets(1)));
	}

	/**
	 * Review of S1: events but no record were written by a version before the record, or by the TypeScript
	 * implementation, neither of which writes sliced copies: the record gets {@code tag-slice-groups} 0 whatever
	 * the first start has, and a start with 16 is refused.
	 */
	@Test
	void aJournalWithEventsButNoRecordRecordsNoSlicedCopiesAndRefusesSixteen(TestKeyspace keyspace) {
		CassandraJournalOptions old = options(keyspace, "legacy_tagged_events").withUseTagIndex(true)
			.withSliceHash(SliceHash.MURMUR3);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), old, new JacksonEventSerializer());
		result(journal.append("legacy-tagged-1", 0, List.of(EventToAppend.of(new Deposited(1), "t"))));
		CassandraJournalOptions sliced16 = old.withTagSliceGroups(16);

		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), sliced16))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("tag-slice-groups", "0", "16")));

		assertThat(recorded(keyspace, "legacy_tagged_events")).isEqualTo(LayoutRecord.layout(old));
		CassandraJournal.verifyLayout(keyspace.session(), old);
	}

	@Test
	void aJournalWithEventsOfAnotherPartitionSizeIsRefusedBeforeAnythingIsRecorded(TestKeyspace keyspace) {
		CassandraJournalOptions writtenWith = options(keyspace, "sized_events").withPartitionSize(2)
			.withSliceHash(SliceHash.MURMUR3);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), writtenWith, new JacksonEventSerializer());
		result(journal.append("sized-1", 0, List.of(EventToAppend.of(new Deposited(1)), EventToAppend.of(new Deposited(2)),
				EventToAppend.of(new Deposited(3)))));
		assertThatExceptionOfType(io.cassandrajournal.JournalSchemaException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(),
					options(keyspace, "sized_events").withPartitionSize(1000)))
			.withMessageContaining("journal.cassandra.partition-size=1000")
			.withMessageContaining("sequence_nr 3 in partition_nr 1")
			.withMessageContaining("greater than 1 and at most 2");
		assertThat(keyspace.session()
			.execute("SELECT settings FROM " + keyspace.name() + ".sized_events_layout WHERE id = 'layout'")
			.one()).as("nothing recorded").isNull();
		CassandraJournal.verifyLayout(keyspace.session(), writtenWith);
	}

	/**
	 * Engineer L, 2026-12-02 (finding 27): a session without schema metadata ({@code advanced.metadata.schema.enabled
	 * = false}, or the keyspace filtered out of it) must still see that the journal has events when no record exists:
	 * the check asked the driver's metadata whether the events table exists, took "no" for a new keyspace, skipped the
	 * partition-size check and recorded this instance's values (here a wrong partition size, which would then refuse
	 * the correctly configured instances).
	 */
	@Test
	void aSessionWithoutSchemaMetadataStillSeesTheEventsOfAJournalWithoutARecord(TestKeyspace keyspace) {
		CassandraJournalOptions writtenWith = options(keyspace, "nometa_events").withPartitionSize(2);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), writtenWith, new JacksonEventSerializer());
		result(journal.append("nometa-1", 0, List.of(EventToAppend.of(new Deposited(1)), EventToAppend.of(new Deposited(2)),
				EventToAppend.of(new Deposited(3)))));
		try (CqlSession noMetadata = TestSessions.open(SharedCassandra.contactPoints(), SharedCassandra.datacenter(),
				keyspace.name(), TestSessions.testConfig()
					.withBoolean(DefaultDriverOption.METADATA_SCHEMA_ENABLED, false))) {
			assertThatExceptionOfType(io.cassandrajournal.JournalSchemaException.class)
				.isThrownBy(() -> CassandraJournal.verifyLayout(noMetadata,
						options(keyspace, "nometa_events").withPartitionSize(1000)))
				.withMessageContaining("journal.cassandra.partition-size=1000");
		}
		assertThat(keyspace.session()
			.execute("SELECT settings FROM " + keyspace.name() + ".nometa_events_layout WHERE id = 'layout'")
			.one()).as("nothing recorded").isNull();
	}

	/**
	 * Engineer L2, 2026-12-02 (review of finding 27, item 1): a string-hash keyspace whose record was deleted (the
	 * Javadoc used to say "update or delete the record") has events but no record. An instance leaving
	 * {@code slice-hash} unset used to record its own default, murmur3, silently: from then on every instance ran
	 * with murmur3, its segments keeping other entities than their cursors were written for. The events do not show
	 * which function they were put in slices with, so the start is refused, naming the property, and nothing is
	 * recorded; an instance that sets the function records it, and the unset ones then adopt it. With sliced tag
	 * copies ({@code tag-slice-groups} 16) the unset start is refused the same way, before the record of the implied
	 * {@code tag-slice-groups} 0 (a deleted record of a sliced keyspace must be restored by hand: update, never
	 * delete).
	 */
	@Test
	void aJournalWithEventsButNoRecordIsRefusedWhenSliceHashIsUnset(TestKeyspace keyspace) {
		CassandraJournalOptions unset = options(keyspace, "deleted_record_events").withUseTagIndex(true)
			.withTagIndexTable("deleted_record_tags");
		CassandraJournalOptions stringHash = unset.withSliceHash(SliceHash.STRING_HASH);
		appendThenDeleteTheRecord(keyspace, stringHash, "deleted_record_events");

		assertThatExceptionOfType(JournalSchemaException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), unset))
			.withMessageContaining("journal.cassandra.slice-hash")
			.withMessageContaining("the layout record is missing")
			.withMessageContaining(keyspace.name() + ".deleted_record_events_layout");
		assertThat(keyspace.session()
			.execute("SELECT settings FROM " + keyspace.name() + ".deleted_record_events_layout WHERE id = 'layout'")
			.one()).as("nothing recorded").isNull();

		CassandraJournal.verifyLayout(keyspace.session(), stringHash);
		assertThat(recorded(keyspace, "deleted_record_events")).containsEntry("slice-hash", "STRING_HASH");
		assertThat(CassandraJournal.verifyLayout(keyspace.session(), unset).sliceHash()).as("adopted from then on")
			.isEqualTo(SliceHash.STRING_HASH);

		CassandraJournalOptions sliced = options(keyspace, "deleted_sliced_events").withUseTagIndex(true)
			.withTagIndexTable("deleted_sliced_tags")
			.withTagSliceGroups(16);
		appendThenDeleteTheRecord(keyspace, sliced.withSliceHash(SliceHash.STRING_HASH), "deleted_sliced_events");
		assertThatExceptionOfType(JournalSchemaException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), sliced))
			.withMessageContaining("journal.cassandra.slice-hash");
		assertThat(keyspace.session()
			.execute("SELECT settings FROM " + keyspace.name() + ".deleted_sliced_events_layout WHERE id = 'layout'")
			.one()).as("nothing recorded (sliced)").isNull();
	}

	/**
	 * The core factories without {@code verifyLayout} (a plain Java application that does not call it): over a
	 * keyspace whose layout table exists but whose record was deleted, with events and {@code slice-hash} unset, they
	 * used to fall back to murmur3 silently (finding 30, item 4). They refuse as {@code verifyLayout} does. A keyspace
	 * whose layout table never existed (the core used without {@code verifyLayout} from the start) keeps murmur3.
	 */
	@Test
	void theCoreFactoriesRefuseEventsWithADeletedRecordWhenSliceHashIsUnset(TestKeyspace keyspace) {
		CassandraJournalOptions unset = options(keyspace, "core_deleted_events").withUseTagIndex(true)
			.withTagIndexTable("core_deleted_tags");
		appendThenDeleteTheRecord(keyspace, unset.withSliceHash(SliceHash.STRING_HASH), "core_deleted_events");

		assertThatExceptionOfType(JournalSchemaException.class)
			.isThrownBy(() -> CassandraJournal.create(keyspace.session(), unset, new JacksonEventSerializer()))
			.withMessageContaining("journal.cassandra.slice-hash")
			.withMessageContaining("the layout record is missing");
		CassandraJournal set = CassandraJournal.create(keyspace.session(), unset.withSliceHash(SliceHash.STRING_HASH),
				new JacksonEventSerializer());
		assertThat(set.options().sliceHash()).as("set, the start goes on").isEqualTo(SliceHash.STRING_HASH);
		assertThatExceptionOfType(JournalSchemaException.class)
			.isThrownBy(() -> CassandraReadJournal.create(set, keyspace.session(), unset, new JacksonEventSerializer()))
			.withMessageContaining("journal.cassandra.slice-hash");

		CassandraJournalOptions never = options(keyspace, "core_never_events");
		CassandraJournal first = CassandraJournal.create(keyspace.session(), never, new JacksonEventSerializer());
		result(first.append("core-never-1", 0, List.of(EventToAppend.of(new Deposited(1), "t"))));
		assertThat(CassandraJournal.create(keyspace.session(), never, new JacksonEventSerializer()).options().sliceHash())
			.as("no layout table ever: murmur3, as before").isEqualTo(SliceHash.MURMUR3);
	}

	private static void appendThenDeleteTheRecord(TestKeyspace keyspace, CassandraJournalOptions options, String events) {
		CassandraJournal.verifyLayout(keyspace.session(), options);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		result(journal.append(events + "-1", 0, List.of(EventToAppend.of(new Deposited(1), "t"))));
		keyspace.session().execute("DELETE FROM " + keyspace.name() + "." + events + "_layout WHERE id = 'layout'");
	}

	/**
	 * Engineer L2, 2026-12-02 (review of finding 27, item 2): the starter verifies the layout before the journal's
	 * factory checks the tables, so with {@code auto-create-tables} off, a layout table the operator created and no
	 * events table, the failed start used to leave a "new keyspace" record of this instance's values behind; once the
	 * events table was restored with its events, the partition-size and implied tag-slice-groups checks never ran.
	 * The check now refuses as the table check would, naming the events table and its CQL, and records nothing.
	 */
	@Test
	void aMissingEventsTableWithAutoCreateOffIsRefusedBeforeAnythingIsRecorded(TestKeyspace keyspace) {
		CassandraJournalOptions options = options(keyspace, "restored_events").withAutoCreateTables(false);
		keyspace.session().execute("CREATE TABLE IF NOT EXISTS " + keyspace.name()
				+ ".restored_events_layout (id text PRIMARY KEY, settings map<text, text>, recorded_at timestamp)");

		assertThatExceptionOfType(JournalSchemaException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), options))
			.withMessageContaining("Table " + keyspace.name() + ".restored_events does not exist")
			.withMessageContaining("CREATE TABLE IF NOT EXISTS " + keyspace.name() + ".restored_events (")
			.withMessageContaining("auto-create-tables");
		assertThat(keyspace.session()
			.execute("SELECT settings FROM " + keyspace.name() + ".restored_events_layout WHERE id = 'layout'")
			.one()).as("nothing recorded").isNull();
	}

}
