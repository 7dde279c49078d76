package io.cassandrajournal.journal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.AccountEvent.Opened;
import io.cassandrajournal.testing.CountingSession;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link Journal#deleteTo} on a real node: bounded by the stored head, and the consistency check around
 * deleted and lost ranges.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DeleteToIT {

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	@BeforeAll
	void createTables(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		CassandraJournal.create(session(), this.options, new JacksonEventSerializer());
	}

	private CqlSession session() {
		return this.keyspace.session();
	}

	private static String newId() {
		return "account-" + UUID.randomUUID();
	}

	private static List<EventToAppend> deposits(int count, String... tags) {
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 1; i <= count; i++) {
			events.add(EventToAppend.of(new Deposited(i), tags));
		}
		return events;
	}

	private static List<Long> replayed(Journal journal, String id) {
		List<Long> seen = new ArrayList<>();
		result(journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> seen.add(e.sequenceNr())));
		return seen;
	}

	@Test
	void deleteToLongMaxValueIssuesRequestsOnlyUpToTheStoredHead() {
		CountingSession counting = new CountingSession(session());
		CassandraJournal journal = CassandraJournal.create(counting.session(), this.options.withPartitionSize(3),
				new JacksonEventSerializer());
		String id = newId();
		result(journal.append(id, 0, deposits(10, "delete-bound")));
		counting.takeCount();
		// Before the fix this loop ran over 3 x 10^18 partitions on the calling thread: stop it at 1,000.
		counting.limitTo(1_000);

		counting.watch(Thread.currentThread());
		var deleted = journal.deleteTo(id, Long.MAX_VALUE);
		int onCallingThread = counting.requestsByWatchedThread();
		result(deleted, Duration.ofSeconds(10));

		int requests = counting.takeCount();
		assertThat(onCallingThread).as("requests sent on the calling thread: the head and the last mark").isEqualTo(2);
		counting.limitTo(Integer.MAX_VALUE);
		// The head and the last deletion mark; one events delete per partition (4 of 3 rows); then the new mark
		// and the removal of older marks.
		assertThat(requests).isLessThanOrEqualTo(2 + 4 + 2);
		assertThat(replayed(journal, id)).isEmpty();
		assertThat(result(journal.highestSequenceNr(id))).isEqualTo(10);
		assertThat(result(journal.checkConsistency(id)).missing()).isEmpty();
	}

	@Test
	void aGapAtTheVeryStartIsReportedUntilItIsDeleted() {
		FaultInjectingSession faults = new FaultInjectingSession(session());
		CassandraJournal faulty = CassandraJournal.create(faults.session(), this.options, new JacksonEventSerializer());
		String id = newId();
		faults.failEverythingButTheClaim();
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(faulty.append(id, 0, List.of(EventToAppend.of(new Opened()),
					EventToAppend.of(new Deposited(1))))));
		faults.heal();
		assertThat(result(faulty.highestSequenceNr(id))).as("the claim stayed").isEqualTo(2);
		result(faulty.append(id, 2, List.of(EventToAppend.of(new Deposited(2)))));

		ConsistencyReport lost = result(faulty.checkConsistency(id));
		assertThat(lost.missing()).containsExactly(new ConsistencyReport.SequenceRange(1, 2));
		assertThat(lost.highestStored()).isEqualTo(3);
		assertThat(lost.storedEvents()).isEqualTo(1);

		result(faulty.deleteTo(id, 1));
		assertThat(result(faulty.checkConsistency(id)).missing())
			.containsExactly(new ConsistencyReport.SequenceRange(2, 2));
		result(faulty.deleteTo(id, 2));
		assertThat(result(faulty.checkConsistency(id)).hasGap()).isFalse();
		assertThat(replayed(faulty, id)).containsExactly(3L);
	}

	@Test
	void aGapAfterADeletedRangeIsStillReported() {
		FaultInjectingSession faults = new FaultInjectingSession(session());
		CassandraJournal faulty = CassandraJournal.create(faults.session(), this.options.withPartitionSize(2),
				new JacksonEventSerializer());
		String id = newId();
		result(faulty.append(id, 0, deposits(3)));
		faults.failEverythingButTheClaim();
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(faulty.append(id, 3, deposits(2))));
		faults.heal();
		result(faulty.append(id, 5, deposits(1)));
		result(faulty.deleteTo(id, 2));

		ConsistencyReport report = result(faulty.checkConsistency(id));
		assertThat(report.missing()).containsExactly(new ConsistencyReport.SequenceRange(4, 5));
		assertThat(report.storedEvents()).isEqualTo(2);
		assertThat(replayed(faulty, id)).containsExactly(3L, 6L);
		assertThat(Set.copyOf(replayed(faulty, id))).doesNotContain(1L, 2L);
	}

}
