package io.cassandrajournal.journal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.AccountEvent.Opened;
import io.cassandrajournal.testing.CountingSession;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.FaultInjectingSession.lightweightTransactions;
import static io.cassandrajournal.testing.FaultInjectingSession.writesTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The write path under faults, on a real node: writes that applied and then timed out, claims whose Paxos
 * round timed out, two writers stamping the same millisecond, and the metadata row the TypeScript
 * implementation leaves when it releases a failed first claim.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AppendFaultsIT {

	private CqlSession session;

	private CassandraJournalOptions options;

	private SettableClock clock;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.session = keyspace.session();
		this.clock = new SettableClock(Instant.now());
		this.options = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withUseTagIndex(true)
			.withClock(this.clock);
		// Creates the tables once.
		CassandraJournal.create(this.session, this.options, new JacksonEventSerializer());
	}

	private CassandraJournal journal(FaultInjectingSession faults) {
		return CassandraJournal.create(faults.session(), this.options, new JacksonEventSerializer());
	}

	private static String newId() {
		return "account-" + System.nanoTime();
	}

	// Issue 12, item 2: an append that failed after some of its writes applied.

	@ParameterizedTest(name = "{0} applied, then timed out")
	@ValueSource(strings = { "events", "events_by_tag" })
	void aWriteThatMayHaveAppliedKeepsTheClaimSoNoSequenceNumberIsWrittenTwice(String table) {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults);
		String id = newId();
		String tag = "t" + System.nanoTime();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened(), tag))));

		faults.applyThenTimeOut(writesTo(table), Integer.MAX_VALUE);
		assertThatExceptionOfType(JournalWriteUncertainException.class)
			.isThrownBy(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(7), tag)))));
		int injected = faults.injected();
		faults.heal();

		// A client told "failed" tries again with the same expected number, a moment later.
		this.clock.advance(Duration.ofMillis(5));
		Throwable second = catchThrowable(
				() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(8), tag)))));

		Map<Long, List<String>> tagRows = tagRows(tag, id);
		assertThat(tagRows).as("one tag index row per (persistenceId, sequenceNr)")
			.allSatisfy((seq, payloads) -> assertThat(payloads).hasSize(1));
		assertThat(tagRows).allSatisfy((seq, payloads) -> assertThat(payloads.get(0))
			.as("the tag index row of %s is the event in events", seq)
			.isEqualTo(eventPayload(id, seq)));
		List<String> delivered = new ArrayList<>();
		CassandraReadJournal query = CassandraReadJournal.create(journal, faults.session(), this.options,
				new JacksonEventSerializer());
		result(query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START, AccountEvent.class,
				(e) -> delivered.add(e.event().persistenceId() + "#" + e.event().sequenceNr())));
		assertThat(delivered).as("a tag query delivers each event once").doesNotHaveDuplicates();
		assertThat(second).as("the sequence number stays claimed").isInstanceOf(JournalConcurrencyException.class);
		assertThat(((JournalConcurrencyException) second).actualSequenceNr()).isEqualTo(2);
		assertThat(injected).as("the failed write and its two retries").isEqualTo(3);
	}

	@Test
	void aWriteThatFailsOnceIsRetriedAndTheAppendSucceeds() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults);
		String id = newId();
		String tag = "t" + System.nanoTime();
		faults.failBeforeSending(writesTo("events"), 1);
		faults.applyThenTimeOut(writesTo("events_by_tag"), 1);
		faults.applyThenDriverTimeout(writesTo("all_persistence_ids"), 1);

		AppendResult appended = result(journal.append(id, 0,
				List.of(EventToAppend.of(new Opened(), tag), EventToAppend.of(new Deposited(3), tag))));

		assertThat(faults.injected()).isEqualTo(3);
		assertThat(appended.lastSequenceNr()).isEqualTo(2);
		assertThat(result(journal.highestSequenceNr(id))).isEqualTo(2);
		List<Object> replayed = new ArrayList<>();
		result(journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> replayed.add(e.payload())));
		assertThat(replayed).containsExactly(new Opened(), new Deposited(3));
		Map<Long, List<String>> tagRows = tagRows(tag, id);
		assertThat(tagRows).containsOnlyKeys(1L, 2L).allSatisfy((seq, payloads) -> assertThat(payloads).hasSize(1));
		assertThat(this.session.execute("SELECT persistence_id FROM all_persistence_ids WHERE tag = '_all' "
				+ "AND persistence_id = ?", id).one()).isNotNull();
	}

	@Test
	void writesThatCertainlyFailedReleaseTheClaimSoTheSameAppendCanBeRetried() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults);
		String id = newId();
		faults.failBeforeSending(writesTo("events").or(writesTo("events_by_tag")), Integer.MAX_VALUE);
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(journal.append(id, 0, List.of(EventToAppend.of(new Opened(), "t")))))
			.isNotInstanceOf(JournalWriteUncertainException.class);
		assertThat(result(journal.highestSequenceNr(id))).as("first claim released").isZero();
		assertThat(this.session.execute("SELECT * FROM metadata WHERE persistence_id = ?", id).one())
			.as("a TypeScript reader finds no metadata row: the id has no events yet")
			.isNull();
		faults.heal();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened(), "t"))));

		faults.failBeforeSending(writesTo("events"), Integer.MAX_VALUE);
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))))
			.isNotInstanceOf(JournalWriteUncertainException.class);
		assertThat(result(journal.highestSequenceNr(id))).as("claim released").isEqualTo(1);
		faults.heal();
		result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1)))));
		assertThat(result(journal.highestSequenceNr(id))).isEqualTo(2);
	}

	/**
	 * Finding 14's open item: the {@code all_persistence_ids} row of a first append was sent in parallel with the
	 * events; when only it failed (after its retries) the events were written, the append was reported uncertain
	 * and the id row stayed missing for good, so persistenceIds() and the projections by persistenceId never saw
	 * the entity. Events must never exist without their id row, and a first append that wrote nothing must fail
	 * plainly (retryable with the same expected number).
	 */
	@ParameterizedTest(name = "lightweight transactions {0}, tagged {1}")
	@CsvSource({ "true, true", "true, false", "false, true", "false, false" })
	void aFirstAppendWhoseIdRowFailedWritesNoEventsAndFailsPlainly(boolean lwt, boolean tagged) {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = CassandraJournal.create(faults.session(),
				this.options.withLightweightTransactions(lwt), new JacksonEventSerializer());
		String id = newId();
		List<EventToAppend> opened = List.of(tagged ? EventToAppend.of(new Opened(), "t") : EventToAppend.of(new Opened()));
		faults.failBeforeSending(writesTo("all_persistence_ids"), Integer.MAX_VALUE);
		Throwable failed = catchThrowable(() -> result(journal.append(id, 0, opened)));
		faults.heal();

		boolean idRow = this.session.execute("SELECT persistence_id FROM all_persistence_ids WHERE tag = '_all' "
				+ "AND persistence_id = ?", id).one() != null;
		assertThat(eventPayload(id, 1) == null || idRow).as("an event never exists without its id row").isTrue();
		assertThat(failed).as("nothing was written: a plain failure")
			.isInstanceOf(JournalUnavailableException.class)
			.isNotInstanceOf(JournalWriteUncertainException.class);
		assertThat(result(journal.highestSequenceNr(id))).as("nothing claimed").isZero();
		result(journal.append(id, 0, opened));
		assertThat(this.session.execute("SELECT persistence_id FROM all_persistence_ids WHERE tag = '_all' "
				+ "AND persistence_id = ?", id).one()).isNotNull();
		assertThat(result(journal.highestSequenceNr(id))).isEqualTo(1);
	}

	/**
	 * Review of finding 13, item 3: a release sent so close to the writer's deadline that it may apply after it
	 * (within its request timeout) could land while a reader seals the numbers, and the next append would reuse
	 * them under the seal. Such a release is not sent: the claim is kept and the append reported uncertain.
	 */
	@Test
	void aReleaseThatCouldApplyAfterTheDeadlineIsNotSentAndTheClaimIsKept() {
		CassandraJournalOptions tight = this.options.withInFlightWait(Duration.ofSeconds(5))
			.withRequestTimeout(Duration.ofSeconds(10));
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = CassandraJournal.create(faults.session(), tight, new JacksonEventSerializer());
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened(), "t"))));

		faults.failBeforeSending(writesTo("events"), Integer.MAX_VALUE);
		assertThatExceptionOfType(JournalWriteUncertainException.class)
			.isThrownBy(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))))
			.satisfies((ex) -> assertThat(ex.firstSequenceNr()).isEqualTo(2));
		assertThat(result(journal.highestSequenceNr(id))).as("the claim is kept, not released").isEqualTo(2);
	}

	/**
	 * Found by the fault run with node faults (docs/reliability.md, finding 4): the node stopped after a claim, so
	 * every write failed before sending and the release failed too. The claim holds, nothing is written, and the
	 * caller was told a plain JournalUnavailableException (which it may read as "retry is safe") without the range
	 * that is now a gap. It must be told the range and that the claim may hold.
	 */
	@Test
	void anAppendWhoseWritesAndReleaseFailedIsReportedAsUncertainWithItsRange() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults);
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.failBeforeSending(writesTo("events").or(writesTo("events_by_tag")), Integer.MAX_VALUE);
		// The claim passes, the release (the same conditional update) fails.
		faults.failOnce(" SET max_sequence_nr = ?, updated_at = ? WHERE persistence_id = ? IF", 1);
		Throwable failed = catchThrowable(() -> result(journal.append(id, 1,
				List.of(EventToAppend.of(new Deposited(1)), EventToAppend.of(new Deposited(2))))));
		faults.heal();

		assertThat(failed).isInstanceOf(JournalWriteUncertainException.class);
		assertThat(((JournalWriteUncertainException) failed).firstSequenceNr()).isEqualTo(2);
		assertThat(((JournalWriteUncertainException) failed).lastSequenceNr()).isEqualTo(3);
		assertThat(failed.getMessage()).contains("nothing of this append was written");
		assertThat(result(journal.checkConsistency(id)).missing()).containsExactly(new ConsistencyReport.SequenceRange(2, 3));
	}

	@Test
	void theSuccessPathSendsNoMoreRequestsThanClaimBatchesAndIdRow() {
		CountingSession counting = new CountingSession(this.session);
		CassandraJournal journal = CassandraJournal.create(counting.session(), this.options,
				new JacksonEventSerializer());
		String id = newId();
		counting.takeCount();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened(), "a", "b"))));
		assertThat(counting.takeCount()).as("claim, one logged batch of events and tag rows, id row").isEqualTo(3);
		result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1), "a"), EventToAppend.of(new Deposited(2)))));
		assertThat(counting.takeCount()).as("claim, one logged batch").isEqualTo(2);
	}

	@Test
	void withoutLightweightTransactionsAWriteThatMayHaveAppliedIsReportedUncertain() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = CassandraJournal.create(faults.session(),
				this.options.withLightweightTransactions(false), new JacksonEventSerializer());
		String id = newId();
		faults.applyThenTimeOut(writesTo("events"), Integer.MAX_VALUE);
		assertThatExceptionOfType(JournalWriteUncertainException.class)
			.isThrownBy(() -> result(journal.append(id, 0, List.of(EventToAppend.of(new Opened())))))
			.satisfies((ex) -> assertThat(ex.lastSequenceNr()).isEqualTo(1));
		faults.heal();
		assertThat(eventPayload(id, 1)).as("applied despite the timeout").isEqualTo("{\"kind\":\"opened\"}");
	}

	// Issue 12, item 3: a timed-out claim credited to the wrong writer.

	@Test
	void twoWritersStampingTheSameMillisecondNeverTakeEachOthersClaim() {
		FaultInjectingSession faultsOfA = new FaultInjectingSession(this.session);
		FaultInjectingSession faultsOfB = new FaultInjectingSession(this.session);
		CassandraJournal a = journal(faultsOfA);
		CassandraJournal b = journal(faultsOfB);
		String id = newId();
		String tag = "t" + System.nanoTime();
		result(a.append(id, 0, List.of(EventToAppend.of(new Opened(), tag))));

		// Same expected number, same event count, same millisecond (the clock stands still). B's claim lands
		// first and B is acknowledged; A's claim reaches Cassandra after it (not applied) and A is told
		// "timed out".
		result(b.append(id, 1, List.of(EventToAppend.of(new Deposited(2), tag))));
		faultsOfA.applyThenTimeOut(lightweightTransactions(), 1);
		Throwable lost = catchThrowable(() -> result(a.append(id, 1, List.of(EventToAppend.of(new Deposited(99), tag)))));

		assertThat(eventPayload(id, 2)).as("B's acknowledged event").isEqualTo("{\"kind\":\"deposited\",\"amount\":2}");
		assertThat(tagRows(tag, id).get(2L)).containsExactly("{\"kind\":\"deposited\",\"amount\":2}");
		assertThat(lost).isInstanceOf(JournalConcurrencyException.class);
		assertThat(((JournalConcurrencyException) lost).actualSequenceNr()).isEqualTo(2);
	}

	@Test
	void aClaimThatTimedOutAndMayBeOursWritesNothingAndLeavesAGap() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults);
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.applyThenTimeOut(lightweightTransactions(), 1);
		Throwable failed = catchThrowable(() -> result(journal.append(id, 1,
				List.of(EventToAppend.of(new Deposited(1)), EventToAppend.of(new Deposited(2))))));

		assertThat(eventPayload(id, 2)).as("no event written under an unproven claim").isNull();
		assertThat(failed).isInstanceOf(JournalConcurrencyException.class);
		assertThat(((JournalConcurrencyException) failed).actualSequenceNr()).isEqualTo(3);
		ConsistencyReport report = result(journal.checkConsistency(id));
		assertThat(report.missing()).containsExactly(new ConsistencyReport.SequenceRange(2, 3));
		result(journal.append(id, 3, List.of(EventToAppend.of(new Deposited(4)))));
		List<Long> replayed = new ArrayList<>();
		result(journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> replayed.add(e.sequenceNr())));
		assertThat(replayed).containsExactly(1L, 4L);
	}

	/**
	 * Found by the fault run (docs/reliability.md, finding 3): a claim that timed out, whose serial head read failed
	 * too, was reported as a plain JournalUnavailableException although the claim may hold. The caller must be told
	 * the outcome is unknown.
	 */
	@Test
	void aClaimThatTimedOutAndCouldNotBeResolvedIsReportedAsUncertain() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults);
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.applyThenTimeOut(lightweightTransactions(), 1);
		faults.failOnce(".metadata WHERE");
		Throwable failed = catchThrowable(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))));

		assertThat(failed).isInstanceOf(JournalWriteUncertainException.class);
		assertThat(((JournalWriteUncertainException) failed).firstSequenceNr()).isEqualTo(2);
		assertThat(((JournalWriteUncertainException) failed).lastSequenceNr()).isEqualTo(2);
		assertThat(failed.getMessage()).contains("nothing of this append was written");
		assertThat(eventPayload(id, 2)).as("no event written under an unresolved claim").isNull();
		assertThat(result(journal.checkConsistency(id)).missing()).containsExactly(new ConsistencyReport.SequenceRange(2, 2));
	}

	@Test
	void aClaimThatTimedOutInTheDriverIsResolvedLikeAServerTimeout() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults);
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.applyThenDriverTimeout(lightweightTransactions(), 1);
		assertThatExceptionOfType(JournalConcurrencyException.class)
			.isThrownBy(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))))
			.satisfies((ex) -> assertThat(ex.actualSequenceNr()).isEqualTo(2));
		assertThat(eventPayload(id, 2)).isNull();
		result(journal.append(id, 2, List.of(EventToAppend.of(new Deposited(1)))));
		assertThat(result(journal.highestSequenceNr(id))).isEqualTo(3);
	}

	@Test
	void aClaimThatTimedOutWithoutApplyingFailsAndCanBeRetried() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults);
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.timeOutWithoutApplying(lightweightTransactions(), 1);
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))))
			.isNotInstanceOf(JournalWriteUncertainException.class)
			.withMessageContaining("did not apply");
		assertThat(result(journal.highestSequenceNr(id))).isEqualTo(1);
		result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1)))));
		assertThat(result(journal.highestSequenceNr(id))).isEqualTo(2);
	}

	// Issue 12, item 4: the TypeScript implementation releases a failed first claim by writing 0.

	@Test
	void aFirstAppendSucceedsAfterTheTypeScriptSideReleasedItsFirstClaim() {
		CassandraJournal journal = CassandraJournal.create(this.session, this.options, new JacksonEventSerializer());
		String id = newId();
		// The TypeScript side's first claim and its compensating release after a failed event batch.
		assertThat(this.session.execute("INSERT INTO metadata (persistence_id, max_sequence_nr, updated_at) "
				+ "VALUES (?, ?, ?) IF NOT EXISTS", id, 1L, 1_700_000_000_000L).wasApplied()).isTrue();
		assertThat(this.session.execute("UPDATE metadata SET max_sequence_nr = ?, updated_at = ? "
				+ "WHERE persistence_id = ? IF max_sequence_nr = ?", 0L, 1_700_000_000_001L, id, 1L).wasApplied())
			.isTrue();
		assertThat(result(journal.highestSequenceNr(id))).isZero();

		AppendResult appended = result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		assertThat(appended.lastSequenceNr()).isEqualTo(1);
		assertThat(eventPayload(id, 1)).isEqualTo("{\"kind\":\"opened\"}");
		assertThatExceptionOfType(JournalConcurrencyException.class)
			.isThrownBy(() -> result(journal.append(id, 0, List.of(EventToAppend.of(new Opened())))))
			.satisfies((ex) -> assertThat(ex.actualSequenceNr()).isEqualTo(1));
	}

	@Test
	void aMetadataRowWithoutAHeadBehavesAsNoRow() {
		CassandraJournal journal = CassandraJournal.create(this.session, this.options, new JacksonEventSerializer());
		String id = newId();
		this.session.execute("INSERT INTO metadata (persistence_id, updated_at) VALUES (?, ?)", id, 1_700_000_000_000L);

		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		assertThat(result(journal.highestSequenceNr(id))).isEqualTo(1);
	}

	/** @return the tag index rows of one persistenceId under one tag: payloads by sequence number */
	private Map<Long, List<String>> tagRows(String tag, String persistenceId) {
		Map<Long, List<String>> rows = new TreeMap<>();
		for (Row row : this.session.execute("SELECT persistence_id, sequence_nr, payload FROM events_by_tag WHERE tag = ?",
				tag)) {
			if (row.getString("persistence_id").equals(persistenceId)) {
				rows.computeIfAbsent(row.getLong("sequence_nr"), (s) -> new ArrayList<>()).add(row.getString("payload"));
			}
		}
		return rows;
	}

	private String eventPayload(String persistenceId, long sequenceNr) {
		Row row = this.session.execute("SELECT payload FROM events WHERE persistence_id = ? AND partition_nr = ? "
				+ "AND sequence_nr = ?", persistenceId, (sequenceNr - 1) / this.options.partitionSize(), sequenceNr).one();
		return (row != null) ? row.getString("payload") : null;
	}

}
