package io.cassandrajournal.journal;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.DepositBalance;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.AccountEvent.Opened;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.FaultInjectingSession.lightweightTransactions;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * How an append reports a claim whose Paxos round may have applied although the caller was told it failed
 * (docs/reliability.md, finding 6, seen on a 3-node cluster): the caller must never read "nothing of yours
 * holds" while the claim may hold numbers without events.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClaimResolutionFaultsIT {

	private CqlSession session;

	private CassandraJournalOptions options;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.session = keyspace.session();
		this.options = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withUseTagIndex(true)
			// What the test node needs (see SETTLE), not the default, which also covers Paxos v1.
			.withClaimSettleTime(SETTLE)
			.withClock(new SettableClock(Instant.now()));
		CassandraJournal.create(this.session, this.options, new JacksonEventSerializer());
	}

	private CassandraJournal journal(CqlSession on) {
		return CassandraJournal.create(on, this.options, new JacksonEventSerializer());
	}

	private static String newId() {
		return "claim-" + System.nanoTime();
	}

	/**
	 * Finding 6, first shape: the claim applied and timed out, another writer claimed on top of it before the
	 * serial read, so the head is above this append's claim. Whether the claim held cannot be told (the other
	 * writer may equally have claimed from our expected number): the append wrote nothing, but its numbers may
	 * be a gap, so it is uncertain with its range, not a plain conflict.
	 */
	@Test
	void aTimedOutClaimOvertakenByAnotherWriterIsReportedAsUncertainWithItsRange() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults.session());
		CassandraJournal other = journal(this.session);
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		// Our claim of 2..3 applies; before its (timed-out) answer, the other writer appends 4 on top of it.
		faults.applyThenTimeOut(lightweightTransactions(), 1,
				() -> other.append(id, 3, List.of(EventToAppend.of(new Deposited(4)))));
		Throwable failed = catchThrowable(() -> result(journal.append(id, 1,
				List.of(EventToAppend.of(new Deposited(1)), EventToAppend.of(new Deposited(2))))));

		assertThat(failed).isInstanceOf(JournalWriteUncertainException.class);
		JournalWriteUncertainException uncertain = (JournalWriteUncertainException) failed;
		assertThat(uncertain.firstSequenceNr()).isEqualTo(2);
		assertThat(uncertain.lastSequenceNr()).isEqualTo(3);
		assertThat(failed.getMessage()).contains("nothing of this append was written");
		assertThat(eventPayload(id, 2)).as("no event written under an unproven claim").isNull();
		assertThat(eventPayload(id, 4)).as("the other writer's event").contains("\"amount\":4");
		assertThat(result(journal.checkConsistency(id)).missing())
			.containsExactly(new ConsistencyReport.SequenceRange(2, 3));
	}

	/**
	 * Finding 6, second shape: a Paxos round that reached a quorum and then failed with
	 * {@code UnavailableException} (Cassandra checks the replicas alive again in the commit phase, after the
	 * proposal was accepted) was taken as "certainly not applied": the caller got a plain
	 * {@code JournalUnavailableException} while the claim held, a gap nobody accounted for. Such a claim is now
	 * resolved with the serial head read like a timeout.
	 */
	@Test
	void aClaimThatAppliedAndThenReportedTooFewReplicasIsResolvedNotTakenAsFailed() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults.session());
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.applyThenFail(lightweightTransactions(), 1, () -> java.util.concurrent.CompletableFuture.completedFuture(null),
				faults::unavailable);
		Throwable failed = catchThrowable(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))));

		// The head holds a claim this append cannot prove its own (finding 2): a conflict at exactly its claim.
		assertThat(failed).isInstanceOf(JournalConcurrencyException.class);
		assertThat(((JournalConcurrencyException) failed).actualSequenceNr()).isEqualTo(2);
		assertThat(eventPayload(id, 2)).isNull();
		assertThat(result(journal.checkConsistency(id)).missing())
			.containsExactly(new ConsistencyReport.SequenceRange(2, 2));
	}

	/**
	 * The claim settle time these tests set: what the launcher's node needs. It runs Paxos v2 (its yaml sets
	 * {@code paxos_variant: v2}) with Cassandra 5.0's built-in timeouts ({@code cas_contention_timeout} 1.8 s,
	 * {@code write_request_timeout} 2 s: the yaml sets neither), so a coordinator proposes until 1.8 s and gives up
	 * committing at 2 s after the request started; 3 s leaves 1 s of margin. The default (6 s) also covers Paxos v1.
	 */
	private static final Duration SETTLE = Duration.ofSeconds(3);

	/** The writer's serial head read, which resolves an uncertain claim. */
	private static Predicate<Statement<?>> serialHeadRead() {
		return (s) -> FaultInjectingSession.cql(s).contains("SELECT max_sequence_nr")
				&& isSerial(s.getConsistencyLevel());
	}

	private static boolean isSerial(ConsistencyLevel level) {
		return level == DefaultConsistencyLevel.SERIAL || level == DefaultConsistencyLevel.LOCAL_SERIAL;
	}

	/**
	 * Finding 20, seen on the cluster: the claim's connection failed ("Unexpected error on channel") while the
	 * coordinator was still running its Paxos round; the writer's serial read, made at once, saw the old head and
	 * the append was reported as "did not apply, retrying is safe"; the round applied afterwards, leaving a claimed
	 * range without events that nobody was told about. Here the claim fails at once with the driver's
	 * {@code ClosedConnectionException} and reaches the node only after the writer's serial read (or 500 ms,
	 * whichever comes first: well inside what a coordinator may still take).
	 */
	@Test
	void aClaimWhoseConnectionFailedAndThatAppliedLaterIsNeverReportedAsNotApplied() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults.session());
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		CompletableFuture<Void> applied = faults.failThenApplyLater(lightweightTransactions(), 1, serialHeadRead(),
				Duration.ofMillis(500), FaultInjectingSession::connectionLost);
		Throwable failed = catchThrowable(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))));
		result(applied, Duration.ofSeconds(10));

		assertThat(head(id)).as("the held claim applied").isEqualTo(2);
		assertReportedWithItsClaim(failed, id, 1, 2);
	}

	/**
	 * The fix must not turn every lost connection into a gap: a claim that never reached the node is still resolved
	 * as "did not apply" (a retry with the same expected number succeeds), but only once the server could no longer
	 * be running it: the serial read waits until the settle time has passed since the claim was sent.
	 */
	@Test
	void aClaimWhoseConnectionFailedBeforeReachingTheNodeIsResolvedAsNotAppliedOnceTheServerGaveUp() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults.session());
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.loseConnectionBeforeSending(lightweightTransactions(), 1, FaultInjectingSession::connectionLost);
		long started = System.nanoTime();
		Throwable failed = catchThrowable(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))));
		Duration took = Duration.ofNanos(System.nanoTime() - started);

		assertThat(failed).isExactlyInstanceOf(JournalUnavailableException.class).hasMessageContaining("did not apply");
		assertThat(took).as("resolved only once the server's timeouts passed since the claim was sent")
			.isGreaterThanOrEqualTo(SETTLE);
		assertThat(result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))).lastSequenceNr())
			.isEqualTo(2);
	}

	/**
	 * A server-side {@code WriteTimeoutException} (CAS) comes after the coordinator gave up on the round: the serial
	 * read is sound at once, as before.
	 */
	@Test
	void aServerSideCasTimeoutIsStillResolvedAtOnce() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournal journal = journal(faults.session());
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.timeOutWithoutApplying(lightweightTransactions(), 1);
		long started = System.nanoTime();
		Throwable failed = catchThrowable(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))));
		Duration took = Duration.ofNanos(System.nanoTime() - started);

		assertThat(failed).isExactlyInstanceOf(JournalUnavailableException.class).hasMessageContaining("did not apply");
		assertThat(took).as("no wait after a server-side timeout").isLessThan(SETTLE);
	}

	/**
	 * Finding 20's second gap ({@code fe-account-1} 58: claimed, no event, no operation covering it) has the shape
	 * of a repository command on this path: the repository passes the journal's "did not apply" on to its caller as
	 * a plain failure (the fault run records it as definitely not applied, and its recording journal records no
	 * attempt for it), while the claim holds. A command whose claim's connection failed and whose round applied
	 * later must succeed (the repository retries the conflict at its own claim) or fail as uncertain, never as
	 * "did not apply" with its claim holding.
	 */
	@Test
	void aRepositoryCommandWhoseClaimAppliedAfterALostConnectionIsNeverReportedAsNotApplied() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		// A short in-flight wait: the retry's load steps over (and seals) the number its own lost claim holds.
		CassandraJournal journal = CassandraJournal.create(faults.session(),
				this.options.withInFlightWait(Duration.ofSeconds(1)), new JacksonEventSerializer());
		EntityRepository<Long, AccountEvent> repository = EntityRepository
			.create(journal, null, new DepositBalance(), 3);
		String id = newId();
		result(repository.execute(id, (state) -> List.of(new Opened())));

		CompletableFuture<Void> applied = faults.failThenApplyLater(lightweightTransactions(), 1, serialHeadRead(),
				Duration.ofMillis(500), FaultInjectingSession::connectionLost);
		Throwable failed = catchThrowable(() -> result(repository.execute(id, (state) -> List.of(new Deposited(5)))));
		result(applied, Duration.ofSeconds(10));

		assertThat(head(id)).as("the held claim applied").isGreaterThanOrEqualTo(2);
		if (failed != null) {
			assertReportedWithItsClaim(failed, id, 1, 2);
		}
		else {
			assertThat(result(repository.load(id)).state()).isEqualTo(5);
		}
	}

	/**
	 * Review of finding 20, item 2: a release is a Paxos round on the head like a claim, and its connection can fail
	 * while its coordinator still runs it, up to {@code claim-settle-time} after it was sent, not only
	 * {@code request-timeout}. A release sent while now plus the request timeout was still before the writer's
	 * deadline could then apply after it, when a reader may have sealed the numbers, and the next append would claim
	 * them again behind the seal. Here (request timeout 500 ms, in-flight wait 3 s, settle time 3 s) the claim reaches
	 * the node 1.5 s late, the events batch fails without being sent, and a release, if one is sent, loses its
	 * connection and applies 2 s later, past the deadline. The append must be uncertain with its range and its claim
	 * must still hold once any such release ran: the next append from the old head is a conflict.
	 */
	@Test
	void aReleaseThatCouldApplyPastTheWritersDeadlineIsNotSentAndTheRangeStaysClaimed() {
		FaultInjectingSession faults = new FaultInjectingSession(this.session);
		CassandraJournalOptions lateWrites = this.options.withInFlightWait(Duration.ofSeconds(3))
			.withRequestTimeout(Duration.ofMillis(500))
			.withClaimSettleTime(SETTLE);
		CassandraJournal journal = CassandraJournal.create(faults.session(), lateWrites, new JacksonEventSerializer());
		String id = newId();
		result(journal.append(id, 0, List.of(EventToAppend.of(new Opened()))));

		faults.delayMatching(headUpdate(id, 2), Duration.ofMillis(1500));
		faults.failBeforeSending((s) -> s instanceof BatchStatement, Integer.MAX_VALUE);
		AtomicBoolean releaseSent = new AtomicBoolean();
		CompletableFuture<Void> releaseApplied = faults.failThenApplyLater(headUpdate(id, 1).and((s) -> {
			releaseSent.set(true);
			return true;
		}), 1, (s) -> false, Duration.ofSeconds(2), FaultInjectingSession::connectionLost);
		Throwable failed = catchThrowable(() -> result(journal.append(id, 1, List.of(EventToAppend.of(new Deposited(1))))));
		if (releaseSent.get()) {
			// Wait (bounded) until the held release has run on the node.
			result(releaseApplied, Duration.ofSeconds(10));
		}
		faults.heal();

		assertThat(failed).isInstanceOf(JournalWriteUncertainException.class);
		assertThat(((JournalWriteUncertainException) failed).firstSequenceNr()).isEqualTo(2);
		assertThat(((JournalWriteUncertainException) failed).lastSequenceNr()).isEqualTo(2);
		assertThat(head(id)).as("the claim still holds: a release applied past the deadline would let 2 be claimed "
				+ "again behind a reader's seal").isEqualTo(2);
		assertThat(catchThrowable(() -> result(journal(this.session).append(id, 1,
				List.of(EventToAppend.of(new Deposited(7)))))))
			.as("number 2 is not claimed again").isInstanceOf(JournalConcurrencyException.class);
	}

	/** @return the conditional head update of {@code id} to {@code newHead} (a claim, or a release back to it) */
	private static Predicate<Statement<?>> headUpdate(String id, long newHead) {
		return (s) -> s instanceof BoundStatement bound
				&& bound.getPreparedStatement().getQuery().startsWith("UPDATE")
				&& bound.getPreparedStatement().getQuery().contains(" IF max_sequence_nr")
				&& id.equals(bound.getString(2)) && bound.getLong(0) == newHead;
	}

	/**
	 * The contract for an append whose claim of {@code expected + 1 .. claimEnd} applied: it is never reported as
	 * "did not apply" (a plain {@link JournalUnavailableException}: retrying is safe); it is a conflict at exactly its
	 * own claim (finding 2: the claim cannot be told from another writer's) or uncertain with its range; and the
	 * gap its claim leaves is covered by that report.
	 */
	private void assertReportedWithItsClaim(Throwable failed, String id, long expected, long claimEnd) {
		assertThat(failed).as("an append whose claim applied is not reported as 'did not apply, retrying is safe'")
			.isInstanceOfAny(JournalConcurrencyException.class, JournalWriteUncertainException.class);
		if (failed instanceof JournalWriteUncertainException uncertain) {
			assertThat(uncertain.firstSequenceNr()).isEqualTo(expected + 1);
			assertThat(uncertain.lastSequenceNr()).isEqualTo(claimEnd);
		}
		else {
			assertThat(((JournalConcurrencyException) failed).actualSequenceNr()).as("a conflict at its own claim")
				.isEqualTo(claimEnd);
		}
		assertThat(result(journal(this.session).checkConsistency(id)).missing())
			.containsExactly(new ConsistencyReport.SequenceRange(expected + 1, claimEnd));
	}

	private long head(String persistenceId) {
		Row row = this.session.execute("SELECT max_sequence_nr FROM metadata WHERE persistence_id = ?", persistenceId)
			.one();
		return (row != null) ? row.getLong("max_sequence_nr") : 0;
	}

	private String eventPayload(String persistenceId, long sequenceNr) {
		Row row = this.session.execute("SELECT payload FROM events WHERE persistence_id = ? AND partition_nr = ? "
				+ "AND sequence_nr = ?", persistenceId, (sequenceNr - 1) / this.options.partitionSize(), sequenceNr).one();
		return (row != null) ? row.getString("payload") : null;
	}

}
