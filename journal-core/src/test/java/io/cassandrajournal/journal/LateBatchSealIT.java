package io.cassandrajournal.journal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.context.DriverContext;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.time.TimestampGenerator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.JournalFixture;
import io.cassandrajournal.testing.LateBatches;
import io.cassandrajournal.testing.LateBatches.Replayed;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.JournalFixture.journal;
import static io.cassandrajournal.testing.JournalFixture.newId;
import static io.cassandrajournal.testing.JournalFixture.releasing;
import static io.cassandrajournal.testing.LateBatches.outcome;
import static io.cassandrajournal.testing.LateBatches.replay;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Finding 13 of docs/reliability.md on a real node: an append whose batch lands later than {@code in-flight-wait}
 * after its claim. A contiguous replay that stepped over its number as a crash gap seals that number (a range
 * deletion with a write time after the claim's), so the batch, landing later, never changes what replays show;
 * the writer does not report such a batch as a success. A batch that lands within the wait is waited for, never
 * sealed, and acknowledged.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LateBatchSealIT {

	private JournalFixture fixture;

	private CassandraJournalOptions options;

	@BeforeAll
	void createTables(TestKeyspace keyspace) {
		// The tag index on: the append's rows go in one logged batch, as in the cluster run of finding 13.
		this.fixture = new JournalFixture(keyspace);
		this.options = this.fixture.options();
	}

	private CqlSession session() {
		return this.fixture.session();
	}

	private static List<EventToAppend> deposit(int amount) {
		return LateBatches.deposit(amount, "late-seal");
	}

	/**
	 * The regression test of finding 13: 1 is appended; writer A claims 2 and its batch is held for 4 s (the
	 * in-flight wait is 1 s); writer B appends 3. A replay waits for 2, then steps over it as a crash gap. Then A's
	 * batch lands: a second replay must show what the first showed (before the fix it showed 2: an entity loaded
	 * before had decided on a state without it).
	 */
	@Test
	void aBatchLandingAfterAReplaySteppedOverItsNumberNeverAppears() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		FaultInjectingSession slow = new FaultInjectingSession(session());
		CassandraJournal a = journal(slow.session(), shortWait);
		CassandraJournal b = journal(session(), shortWait);
		String id = newId();
		CompletionStage<AppendResult> late = LateBatches.heldBetween(a, slow, b, id, Duration.ofSeconds(4), "late-seal")
			.late();

		Replayed first = result(replay(b, id), Duration.ofSeconds(10));
		assertThat(first.sequenceNrs()).as("2 stepped over as a crash gap").containsExactly(1L, 3L);
		assertThat(first.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
		Throwable failure = outcome(late);

		Replayed second = result(replay(b, id), Duration.ofSeconds(10));
		assertThat(second.sequenceNrs()).as("the second replay equals the first").isEqualTo(first.sequenceNrs());
		assertThat(second.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
		assertThat(failure).as("A's batch completed after the in-flight wait: not a success")
			.isInstanceOf(JournalWriteUncertainException.class);
	}

	/** The writer's deadline: a batch that completes later than in-flight-wait after its claim may have been sealed. */
	@Test
	void aBatchCompletingAfterTheWritersDeadlineIsReportedAsUncertain() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		FaultInjectingSession slow = new FaultInjectingSession(session());
		CassandraJournal a = journal(slow.session(), shortWait);
		String id = newId();
		result(a.append(id, 0, deposit(1)));
		slow.delayBatches(Duration.ofMillis(2500));

		assertThatExceptionOfType(JournalWriteUncertainException.class)
			.isThrownBy(() -> result(a.append(id, 1, deposit(2)), Duration.ofSeconds(20)))
			.satisfies((ex) -> {
				assertThat(ex.persistenceId()).isEqualTo(id);
				assertThat(ex.firstSequenceNr()).isEqualTo(2);
				assertThat(ex.lastSequenceNr()).isEqualTo(2);
			})
			.withMessageContaining("in-flight");
		assertThat(result(a.highestSequenceNr(id))).as("the range stays claimed").isEqualTo(2);
	}

	/**
	 * The other side of the deadline: a batch held for less than the in-flight wait is a success, and a replay that
	 * met its number missing waits for it and never seals it (no acknowledged event lost). On the code before the fix
	 * this passes too: it guards the fix against sealing too early.
	 */
	@Test
	void aBatchCompletingBeforeTheDeadlineIsASuccessAndIsNeverSealed() {
		CassandraJournalOptions wait = this.options.withInFlightWait(Duration.ofSeconds(4));
		FaultInjectingSession slow = new FaultInjectingSession(session());
		CassandraJournal a = journal(slow.session(), wait);
		CassandraJournal b = journal(session(), wait);
		String id = newId();
		CompletionStage<AppendResult> held = LateBatches.heldBetween(a, slow, b, id, Duration.ofMillis(1500), "late-seal")
			.late();
		CompletionStage<Replayed> whileHeld = replay(b, id);

		assertThat(outcome(held)).as("A's append, held less than the in-flight wait").isNull();
		Replayed first = result(whileHeld, Duration.ofSeconds(10));
		assertThat(first.sequenceNrs()).containsExactly(1L, 2L, 3L);
		assertThat(first.result().crashGaps()).isEmpty();
		assertThat(result(replay(b, id), Duration.ofSeconds(10)).sequenceNrs()).containsExactly(1L, 2L, 3L);
	}

	/** A seal that fails is not a step over: the replay fails as after a failed read, and a later one seals. */
	@Test
	void aReplayWhoseSealFailsDoesNotStepOver() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		FaultInjectingSession faults = new FaultInjectingSession(session());
		CassandraJournal journal = journal(faults.session(), shortWait);
		String id = newId();
		result(journal.append(id, 0, deposit(1)));
		LateBatches.appendDyingAfterItsClaim(journal, faults, id, 1, deposit(2));
		result(journal.append(id, 2, deposit(3)));

		int before = faults.injected();
		faults.failStatementsStartingWith(
				"DELETE FROM " + this.fixture.keyspaceName() + "." + shortWait.eventsTable() + " ");
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(replay(journal, id), Duration.ofSeconds(10)));
		assertThat(faults.injected()).as("the seal was tried and failed").isGreaterThan(before);
		faults.heal();
		Replayed replayed = result(replay(journal, id), Duration.ofSeconds(10));
		assertThat(replayed.sequenceNrs()).containsExactly(1L, 3L);
		assertThat(replayed.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
	}

	/**
	 * Finding 15, item 7: an append too large for one logged batch writes its events, then its tag rows. When the
	 * events complete past the writer's deadline a reader may have sealed them: tag rows written then would sit in
	 * the tag index without their events. The events of a 60 KB append are held 2.5 s against a 1 s wait: the
	 * append is reported uncertain and writes no tag row.
	 */
	@Test
	void aLargeAppendWhoseEventsCompletedPastTheDeadlineWritesNoTagRows() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		String id = newId();
		Throwable failure = largeAppendWithWritesHeld(shortWait, shortWait.eventsTable(), id,
				"late-large-" + System.nanoTime());

		assertThat(failure).as("the events completed after the in-flight wait: not a success")
			.isInstanceOf(JournalWriteUncertainException.class);
		assertThat(tagRows(shortWait, id)).as("no tag row after events that may be sealed").isEmpty();
	}

	/**
	 * Finding 21, item 5 (kept, conservative): the writer judges its deadline once its last write completed, so a large
	 * append (events, then tag rows) whose events were acknowledged in time but whose tag rows completed past the
	 * deadline is reported uncertain. A false "uncertain", never a lost event: a reader that met its numbers missing
	 * seals them only after the deadline, and by then the events were acknowledged, so it read them (no seal); the
	 * writer's own settle finds them and does nothing; a feed that first reads the late tag row checks the event and
	 * finds it. The tag rows' write (one per tag) is held 2.5 s against a 1 s wait: the append is uncertain, its event
	 * and its tag row stay. Passes on the code as it is: it pins the behaviour the docs explain.
	 */
	@Test
	void aLargeAppendWhoseTagRowsCompletedPastTheDeadlineIsUncertainButKeepsItsEvent() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		String id = newId();
		String tag = "late-tags-" + System.nanoTime();
		Throwable failure = largeAppendWithWritesHeld(shortWait, shortWait.tagIndexDataTable(), id, tag);

		assertThat(failure).as("the tag rows completed after the in-flight wait").isInstanceOf(
				JournalWriteUncertainException.class);
		// Past the writer's settle (it runs once the wait has passed since the claim, here at once): nothing removed.
		await().alias("the event and its tag row stay")
			.during(Duration.ofSeconds(2))
			.atMost(Duration.ofSeconds(10))
			.until(() -> eventRows(shortWait, id).equals(List.of(1L))
					&& tagRows(shortWait, id).equals(List.of(tag + "#1")));
		// The payload is a Note, not an AccountEvent: replayed as stored JSON.
		List<Long> replayed = new ArrayList<>();
		result(journal(session(), shortWait).replayContiguousRaw(id, 1, Long.MAX_VALUE,
				(e) -> replayed.add(e.sequenceNr())), Duration.ofSeconds(10));
		assertThat(replayed).containsExactly(1L);
	}

	/**
	 * A first append of one 60 KB event (too large for one logged batch: its events, then its tag rows) whose writes
	 * to {@code table} are held 2.5 s before they are sent.
	 * @return the append's failure, null on success
	 */
	private Throwable largeAppendWithWritesHeld(CassandraJournalOptions options, String table, String id, String tag) {
		FaultInjectingSession slow = new FaultInjectingSession(session());
		CassandraJournal a = journal(slow.session(), options);
		slow.delayMatching(FaultInjectingSession.writesTo(table), Duration.ofMillis(2500));
		Throwable failure = outcome(
				a.append(id, 0, List.of(EventToAppend.of(new AtomicAppendIT.Note("y".repeat(60_000)), tag))));
		slow.heal();
		return failure;
	}

	/**
	 * Finding 21, item 5's other half: a first append's persistenceId row is written before the deadline starts
	 * (finding 14), so however late it completes it cannot make the append late. The id row's write is held 1.5 s
	 * against a 1 s wait: the append is acknowledged. Passes on the code as it is.
	 */
	@Test
	void aFirstAppendWhoseIdRowCompletedLateIsAcknowledged() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		FaultInjectingSession slow = new FaultInjectingSession(session());
		CassandraJournal a = journal(slow.session(), shortWait);
		String id = newId();
		slow.delayMatching(FaultInjectingSession.writesTo(shortWait.allIdsTable()), Duration.ofMillis(1500));

		assertThat(outcome(a.append(id, 0, deposit(1)))).as("the first append's outcome").isNull();
		slow.heal();
		assertThat(result(replay(a, id), Duration.ofSeconds(10)).sequenceNrs()).containsExactly(1L);
	}

	/**
	 * Review 2, item 3 (finding 15): in the bucketed tag layout the logged batch is sent once the tag's bucket list
	 * row is written. When that write's answer comes back past the writer's deadline a reader may already have
	 * sealed the numbers: a batch sent then would leave its tag rows (not covered by the seal) without events. The
	 * bucket list write's answer is held 2.5 s against a 1 s wait: the batch must not be sent, the append is
	 * reported uncertain and its claim kept.
	 */
	@Test
	void aBatchWhoseBucketListWriteAnsweredPastTheDeadlineIsNotSent() {
		CassandraJournalOptions hourly = this.options.withInFlightWait(Duration.ofSeconds(1))
			.withTagBucketing(TagBucketing.HOUR);
		journal(session(), hourly);
		FaultInjectingSession slow = new FaultInjectingSession(session());
		CassandraJournal a = journal(slow.session(), hourly);
		String id = newId();
		String tag = "late-bucket-" + System.nanoTime();
		result(a.append(id, 0, deposit(1)));
		slow.delayAnswerOnce(FaultInjectingSession.writesTo(hourly.tagBucketsTable()), 0, Duration.ofMillis(2500));

		Throwable failure = outcome(a.append(id, 1, List.of(EventToAppend.of(new Deposited(2), tag))));
		slow.heal();

		assertThat(failure).as("the batch could only be sent past the deadline").isInstanceOf(
				JournalWriteUncertainException.class);
		assertThat(tagRows(hourly, id)).as("no tag row of 2").noneMatch((row) -> row.startsWith(tag));
		assertThat(eventRows(hourly, id)).as("no event row of 2").containsExactly(1L);
		assertThat(result(a.highestSequenceNr(id))).as("the claim is kept").isEqualTo(2);
	}

	/**
	 * A replay that meets an old crash gap seals it; a repeated replay by the same journal does not write the seal
	 * again (a bounded memo of sealed ranges per journal). Three replays, one seal write.
	 */
	@Test
	void aRepeatedReplayOverAnOldCrashGapWritesItsSealOnce() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		String id = oldCrashGap(shortWait);
		AtomicInteger seals = new AtomicInteger();
		CqlSession counting = countingSeals(shortWait, seals, false);
		CassandraJournal reader = journal(counting, shortWait);
		for (int i = 0; i < 3; i++) {
			Replayed replayed = result(replay(reader, id), Duration.ofSeconds(10));
			assertThat(replayed.sequenceNrs()).containsExactly(1L, 3L);
			assertThat(replayed.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
		}
		assertThat(seals.get()).as("seal writes over three replays").isEqualTo(1);
	}

	/**
	 * Review 2, item 2 (finding 15): the memo of sealed gaps must not step over the same numbers claimed again after
	 * the seal (a release applied late, an operator fixing the head). The gap at 2 is sealed; the head is rolled back
	 * to 1 by plain CQL and 2 is claimed again by an append that dies after its claim: the next replay must write a
	 * new seal (its write time past the new claim's time plus the wait), not trust the memo of the old one.
	 */
	@Test
	void aGapClaimedAgainAfterItsSealIsSealedAgain() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		FaultInjectingSession faults = new FaultInjectingSession(session());
		CassandraJournal writer = journal(faults.session(), shortWait);
		String id = newId();
		result(writer.append(id, 0, deposit(1)));
		LateBatches.appendDyingAfterItsClaim(writer, faults, id, 1, deposit(2));
		AtomicInteger seals = new AtomicInteger();
		CassandraJournal reader = journal(countingSeals(shortWait, seals, false), shortWait);
		Replayed first = result(replay(reader, id), Duration.ofSeconds(10));
		assertThat(first.sequenceNrs()).containsExactly(1L);
		assertThat(first.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
		assertThat(seals.get()).as("the first seal").isEqualTo(1);

		session().execute("UPDATE " + shortWait.requireKeyspace() + "." + shortWait.metadataTable()
				+ " SET max_sequence_nr = 1 WHERE persistence_id = ?", id);
		// The same fault session: every claim goes through, not only its first.
		LateBatches.appendDyingAfterItsClaim(writer, faults, id, 1, deposit(2));
		assertThat(result(reader.highestSequenceNr(id))).as("2 claimed again").isEqualTo(2);

		Replayed second = result(replay(reader, id), Duration.ofSeconds(10));
		assertThat(second.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
		assertThat(seals.get()).as("seal writes: the re-claimed 2 is sealed again").isEqualTo(2);
	}

	/**
	 * Review 2, item 2 (finding 15): a seal that failed is not remembered as written, so the next replay writes it.
	 * The memo was only ever filled after a written seal, so this passes on the code before the change too: it guards
	 * the memo against remembering a failed seal.
	 */
	@Test
	void aFailedSealIsWrittenAgainByTheNextReplay() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		String id = oldCrashGap(shortWait);
		AtomicInteger seals = new AtomicInteger();
		FaultInjectingSession faults = new FaultInjectingSession(countingSeals(shortWait, seals, false));
		CassandraJournal reader = journal(faults.session(), shortWait);
		faults.failStatementsStartingWith(
				"DELETE FROM " + this.fixture.keyspaceName() + "." + shortWait.eventsTable() + " ");
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(replay(reader, id), Duration.ofSeconds(10)));
		assertThat(seals.get()).as("the failed seal never reached the node").isZero();
		faults.heal();

		Replayed replayed = result(replay(reader, id), Duration.ofSeconds(10));
		assertThat(replayed.sequenceNrs()).containsExactly(1L, 3L);
		assertThat(replayed.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
		assertThat(seals.get()).as("seal writes after the failed one").isEqualTo(1);
	}

	/**
	 * Finding 21, item 1: a claim release whose proposal a quorum accepted and whose commit timed out is completed by
	 * the next Paxos round on the row, at any later time. The append of 2 claims it, its batch fails before sending
	 * and its release (sent in time: a 4 s wait, a 1 s request timeout and settle time) is accepted but not committed, so the writer
	 * reports the claim kept. A replay reads the head without a serial read (still 2) and, once the wait has passed,
	 * meets 2 missing at the end. The next claim (expected 2) completes the release, conflicts, and the retry with
	 * the head it learned (1) claims 2 again and is acknowledged: no replay may have stepped over that number as a
	 * crash gap. Before the fix the replay sealed and stepped over 2.
	 */
	@Test
	void aReleaseCompletedByALaterPaxosRoundIsNotSteppedOverUnderTheNextClaim() {
		releaseCompletedLaterIsNotSteppedOver(releasing(this.options, Duration.ofSeconds(4)));
	}

	/**
	 * Finding 21, item 7: with seals off a replay steps over a gap at the end after the wait, unsealed; it did so
	 * without the serial read, so a release of that claim accepted without commit was completed by the next claim,
	 * which then took the numbers again behind a reader that had stepped over them. As in the test above, here with an
	 * in-flight wait of zero (nothing waits, nothing is sealed).
	 */
	@Test
	void withAWaitOfZeroAReleaseCompletedLaterIsNotSteppedOverUnderTheNextClaim() {
		releaseCompletedLaterIsNotSteppedOver(this.options.withInFlightWait(Duration.ZERO));
	}

	/** Finding 21, item 7, with seals off because the consistency level does not overlap ({@code ONE}). */
	@Test
	void withSealsOffAReleaseCompletedLaterIsNotSteppedOverUnderTheNextClaim() {
		releaseCompletedLaterIsNotSteppedOver(
				releasing(this.options, Duration.ofSeconds(4)).withConsistency(DefaultConsistencyLevel.ONE));
	}

	/**
	 * 1 appended; the append of 2 fails with its release accepted without commit; a replay (which may wait for 2 up
	 * to the 4 s wait: 10 s is ample) must complete the release by its serial read and not step over 2; the next claim
	 * conflicts, and 2 is claimed again and acknowledged.
	 */
	private void releaseCompletedLaterIsNotSteppedOver(CassandraJournalOptions options) {
		FaultInjectingSession faults = new FaultInjectingSession(session());
		CassandraJournal journal = journal(faults.session(), options);
		String id = newId();
		result(journal.append(id, 0, deposit(1)));
		LateBatches.appendWithAnUncommittedRelease(journal, faults, id, 1, deposit(2));

		Replayed replayed = result(replay(journal, id), Duration.ofSeconds(10));
		assertThat(faults.proposalPending()).as("the replay's serial read completed the release").isFalse();
		assertThat(replayed.sequenceNrs()).containsExactly(1L);
		assertThat(replayed.result().head()).as("the head after the release").isEqualTo(1);

		assertThatExceptionOfType(JournalConcurrencyException.class)
			.isThrownBy(() -> result(journal.append(id, 2, deposit(3))));
		AppendResult again = result(journal.append(id, 1, deposit(2)));
		assertThat(again.firstSequenceNr()).as("2 claimed again and acknowledged").isEqualTo(2);
		assertThat(replayed.result().crashGaps()).as("crash gaps stepped over by the replay")
			.noneMatch((gap) -> gap.from() <= 2 && gap.to() >= 2);
		assertThat(result(replay(journal, id), Duration.ofSeconds(10)).sequenceNrs()).containsExactly(1L, 2L);
	}

	/**
	 * Review of finding 21 item 1: each round reads the head again, and a gap at the end of the replay's range was
	 * judged by the claim time of the head it showed, even when the head had moved above the range. The append of 2
	 * dies after its claim; a replay reads the head (2) and meets 2 missing. Another writer then appends back to
	 * back, each claim newer than the last: judged by the newest head, 2 never got older than the 1 s wait and the
	 * replay never finished. Judged by the first visible event above the range (3, claimed after 2), 2 is sealed and
	 * stepped over about 1 s after 3's claim.
	 */
	@Test
	void aReplayToTheEndAfterACrashedClaimFinishesWhileAnotherWriterKeepsAppending() {
		CassandraJournalOptions wait = this.options.withInFlightWait(Duration.ofSeconds(1));
		FaultInjectingSession faults = new FaultInjectingSession(session());
		FaultInjectingSession watched = new FaultInjectingSession(session());
		CassandraJournal writer = journal(faults.session(), wait);
		CassandraJournal reader = journal(watched.session(), wait);
		String id = newId();
		result(writer.append(id, 0, deposit(1)));
		LateBatches.appendDyingAfterItsClaim(writer, faults, id, 1, deposit(2));
		AtomicBoolean eventsRead = new AtomicBoolean();
		watched.delayMatching((statement) -> {
			if (FaultInjectingSession.cql(statement).contains("SELECT sequence_nr, timestamp, payload, tags FROM")) {
				eventsRead.set(true);
			}
			return false;
		}, Duration.ZERO);

		CompletableFuture<Replayed> replay = replay(reader, id).toCompletableFuture();
		// The replay's first events read is sent after its head read: its range is 1..2.
		await().alias("the replay's first read").atMost(Duration.ofSeconds(10)).untilTrue(eventsRead);
		// Appends back to back until the replay finishes; the bound: 1 s wait, 10 s allowed.
		long head = 2;
		long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!replay.isDone() && System.nanoTime() < until) {
			head = result(writer.append(id, head, deposit(3))).lastSequenceNr();
		}
		assertThat(replay).as("the replay finished within 10 s while appends went on (head " + head + ")").isDone();
		Replayed replayed = result(replay);
		assertThat(replayed.sequenceNrs()).containsExactly(1L);
		assertThat(replayed.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
		assertThat(replayed.result().crashGapsSealed()).isTrue();
	}

	/** @return an entity with an old crash gap at 2 (1 and 3 written; the append of 2 died after its claim) */
	private String oldCrashGap(CassandraJournalOptions options) {
		FaultInjectingSession faults = new FaultInjectingSession(session());
		CassandraJournal writer = journal(faults.session(), options);
		String id = newId();
		result(writer.append(id, 0, deposit(1)));
		LateBatches.appendDyingAfterItsClaim(writer, faults, id, 1, deposit(2));
		result(writer.append(id, 2, deposit(3)));
		return id;
	}

	/**
	 * @param seals counts the seal writes executed through the session
	 * @param serverSideTimestamps whether the session's time stamp generator leaves time stamps to the server (as
	 * the driver's {@code ServerSideTimestampGenerator} does)
	 * @return the test keyspace's session, counting seal writes
	 */
	private CqlSession countingSeals(CassandraJournalOptions options, AtomicInteger seals, boolean serverSideTimestamps) {
		String seal = "DELETE FROM " + this.fixture.keyspaceName() + "." + options.eventsTable() + " USING TIMESTAMP";
		TimestampGenerator serverSide = new TimestampGenerator() {
			@Override
			public long next() {
				return Statement.NO_DEFAULT_TIMESTAMP;
			}

			@Override
			public void close() {
			}
		};
		DriverContext context = session().getContext();
		DriverContext contextView = (DriverContext) Proxy.newProxyInstance(DriverContext.class.getClassLoader(),
				new Class<?>[] { DriverContext.class }, (proxy, method, args) -> {
					if (serverSideTimestamps && method.getName().equals("getTimestampGenerator")) {
						return serverSide;
					}
					return invoke(context, method, args);
				});
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				(proxy, method, args) -> {
					if (method.getName().equals("getContext")) {
						return contextView;
					}
					if (method.getName().startsWith("execute") && args != null && args.length == 1
							&& args[0] instanceof Statement<?> statement
							&& FaultInjectingSession.cql(statement).startsWith(seal)) {
						seals.incrementAndGet();
					}
					return invoke(session(), method, args);
				});
	}

	private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	/**
	 * Finding 15, item 2: the seal assumes a reader sees every acknowledged write. With reads and writes at
	 * {@code ONE} it need not, so the reader does not seal: it steps over the gap after the wait, unsealed, as
	 * before the seal existed.
	 */
	@Test
	void withConsistencyLevelsThatDoNotOverlapAGapIsSteppedOverUnsealed() {
		CassandraJournalOptions one = this.options.withInFlightWait(Duration.ofSeconds(1))
			.withConsistency(DefaultConsistencyLevel.ONE);
		String id = oldCrashGap(one);
		AtomicInteger seals = new AtomicInteger();
		CassandraJournal reader = journal(countingSeals(one, seals, false), one);
		Replayed replayed = result(replay(reader, id), Duration.ofSeconds(10));
		assertThat(replayed.sequenceNrs()).containsExactly(1L, 3L);
		assertThat(replayed.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
		assertThat(seals.get()).as("seal writes at ONE").isZero();
	}

	/**
	 * Finding 15, item 9: with server-side time stamps the seal cannot shadow a batch that reaches the coordinator
	 * after it. The journal detects a time stamp generator that returns none and does not seal.
	 */
	@Test
	void withServerSideTimestampsAGapIsSteppedOverUnsealed() {
		CassandraJournalOptions shortWait = this.options.withInFlightWait(Duration.ofSeconds(1));
		String id = oldCrashGap(shortWait);
		AtomicInteger seals = new AtomicInteger();
		CassandraJournal reader = journal(countingSeals(shortWait, seals, true), shortWait);
		Replayed replayed = result(replay(reader, id), Duration.ofSeconds(10));
		assertThat(replayed.sequenceNrs()).containsExactly(1L, 3L);
		assertThat(replayed.result().crashGaps()).containsExactly(new SequenceRange(2, 2));
		assertThat(seals.get()).as("seal writes with server-side time stamps").isZero();
	}

	/** @return the sequence numbers of the persistenceId's event rows in its first partition */
	private List<Long> eventRows(CassandraJournalOptions options, String persistenceId) {
		List<Long> rows = new ArrayList<>();
		for (Row row : session().execute("SELECT sequence_nr FROM " + options.requireKeyspace() + "."
				+ options.eventsTable() + " WHERE persistence_id = ? AND partition_nr = 0", persistenceId)) {
			rows.add(row.getLong("sequence_nr"));
		}
		return rows;
	}

	/** @return the persistenceId's rows in the tag index, as tag#sequenceNr */
	private List<String> tagRows(CassandraJournalOptions options, String persistenceId) {
		List<String> rows = new ArrayList<>();
		for (Row row : session().execute("SELECT tag, sequence_nr FROM " + options.requireKeyspace() + "."
				+ options.tagIndexDataTable() + " WHERE persistence_id = ? ALLOW FILTERING", persistenceId)) {
			rows.add(row.getString("tag") + "#" + row.getLong("sequence_nr"));
		}
		return rows;
	}

}
