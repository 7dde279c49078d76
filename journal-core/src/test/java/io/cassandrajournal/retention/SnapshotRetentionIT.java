package io.cassandrajournal.retention;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.DepositBalance;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * {@link EntityRepository#withSnapshotRetention} on a real node: after each snapshot the older snapshots and,
 * optionally, the events below the kept ones go; loads still fold to the head.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SnapshotRetentionIT {

	private CassandraJournal journal;

	private CassandraSnapshotStore snapshots;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name())
			.withUseTagIndex(true);
		this.journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		this.snapshots = CassandraSnapshotStore.create(keyspace.session(), options, new JacksonEventSerializer());
	}

	private List<Long> replayed(String id) {
		List<Long> seen = new ArrayList<>();
		result(this.journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> seen.add(e.sequenceNr())));
		return seen;
	}

	private List<Long> snapshotsOf(String id) {
		List<Long> found = new ArrayList<>();
		long below = Long.MAX_VALUE;
		while (true) {
			var latest = result(this.snapshots.loadLatest(id, below, Long.class));
			if (latest.isEmpty()) {
				return found;
			}
			found.add(latest.get().sequenceNr());
			below = latest.get().sequenceNr() - 1;
		}
	}

	private void deposit(EntityRepository<Long, AccountEvent> repository, String id, int commands) {
		for (int i = 0; i < commands; i++) {
			result(repository.execute(id, (s) -> List.of(new Deposited(1))));
		}
	}

	@Test
	void keepTwoSnapshotsAndDeleteTheEventsBelowThem() {
		EntityRepository<Long, AccountEvent> repository = EntityRepository
			.create(this.journal, this.snapshots, new DepositBalance(5), 0)
			.withSnapshotRetention(2, true);
		String id = "kept-" + UUID.randomUUID();

		deposit(repository, id, 23);

		// Snapshots at 5, 10, 15, 20; after the one at 20: up to 20 - 2 x 5 = 10 deleted.
		await().alias("retention after the snapshot at 20").atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(snapshotsOf(id)).containsExactly(20L, 15L));
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(replayed(id)).first().isEqualTo(11L));
		assertThat(replayed(id)).hasSize(13);
		assertThat(result(EntityRepository.create(this.journal, this.snapshots, new DepositBalance(5), 0)
			.load(id)).state())
			.isEqualTo(23L);
		assertThat(result(this.journal.checkConsistency(id)).hasGap()).isFalse();
	}

	@Test
	void keepOneSnapshotWithoutDeletingEvents() {
		EntityRepository<Long, AccountEvent> repository = EntityRepository
			.create(this.journal, this.snapshots, new DepositBalance(4), 0)
			.withSnapshotRetention(1, false);
		String id = "events-stay-" + UUID.randomUUID();

		deposit(repository, id, 13);

		await().alias("retention after the snapshot at 12").atMost(Duration.ofSeconds(30))
			.untilAsserted(() -> assertThat(snapshotsOf(id)).containsExactly(12L));
		assertThat(replayed(id)).hasSize(13).first().isEqualTo(1L);
	}

	@Test
	void retentionNeedsSnapshots() {
		EntityRepository<Long, AccountEvent> noSnapshots = EntityRepository.create(this.journal, this.snapshots,
				new DepositBalance(0), 0);
		assertThatIllegalArgumentException().isThrownBy(() -> noSnapshots.withSnapshotRetention(1, true))
			.withMessageContaining("snapshot retention needs them");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> EntityRepository.create(this.journal, this.snapshots, new DepositBalance(3), 0)
				.withSnapshotRetention(-1, true))
			.withMessageContaining("keepSnapshots");
	}

}
