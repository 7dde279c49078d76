package io.cassandrajournal.journal;

import java.time.Instant;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.serialization.JacksonEventSerializer;
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

	private String eventPayload(String persistenceId, long sequenceNr) {
		Row row = this.session.execute("SELECT payload FROM events WHERE persistence_id = ? AND partition_nr = ? "
				+ "AND sequence_nr = ?", persistenceId, (sequenceNr - 1) / this.options.partitionSize(), sequenceNr).one();
		return (row != null) ? row.getString("payload") : null;
	}

}
