package io.cassandrajournal.entity;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.AccountEvent.Opened;
import io.cassandrajournal.testing.AccountEvent.Withdrawn;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Entity loads on a real node, where another writer's events can be claimed but not yet visible.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class EntityRepositoryIT {

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	private CassandraJournal journal;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name());
		this.journal = CassandraJournal.create(keyspace.session(), this.options, new JacksonEventSerializer());
	}

	/** An account that refuses to go below zero. */
	static class Account implements EventSourcedEntity<Long, AccountEvent> {

		@Override
		public Long emptyState() {
			return 0L;
		}

		@Override
		public Long applyEvent(Long balance, AccountEvent event) {
			if (event instanceof Deposited deposited) {
				return balance + deposited.amount();
			}
			if (event instanceof Withdrawn withdrawn) {
				return balance - withdrawn.amount();
			}
			return balance;
		}

		@Override
		public Class<AccountEvent> eventType() {
			return AccountEvent.class;
		}

		@Override
		public Class<Long> stateType() {
			return Long.class;
		}

	}

	static final class InsufficientFunds extends RuntimeException {

		private static final long serialVersionUID = 1L;

		InsufficientFunds(long balance) {
			super("insufficient funds: " + balance);
		}

	}

	static List<AccountEvent> withdraw(EntityState<Long> current, long amount) {
		if (current.state() < amount) {
			throw new InsufficientFunds(current.state());
		}
		return List.of(new Withdrawn(amount));
	}

	/**
	 * Writer A's batches become visible two seconds after its claim; writer B (another journal on another
	 * session, as another process) withdraws while A's withdrawal is claimed but not visible. B must decide
	 * on A's withdrawal, never on the balance before it.
	 */
	@Test
	void aLoadWaitsForAnotherWritersClaimedEventsSoNoBalanceEverGoesNegative() {
		FaultInjectingSession slow = new FaultInjectingSession(this.keyspace.session());
		CassandraJournal journalA = CassandraJournal.create(slow.session(), this.options, new JacksonEventSerializer());
		EntityRepository<Long, AccountEvent> writerA = EntityRepository.create(journalA, null, new Account(), 3);
		EntityRepository<Long, AccountEvent> writerB = EntityRepository.create(this.journal, null, new Account(), 3);
		String id = "account-race-" + System.nanoTime();
		result(writerB.execute(id, (s) -> List.of(new Opened())));
		slow.delayBatches(Duration.ofSeconds(2));
		for (int round = 0; round < 3; round++) {
			result(writerB.execute(id, (s) -> List.of(new Deposited(100))));
			long head = result(this.journal.highestSequenceNr(id));
			CompletionStage<CommandResult<Long, AccountEvent>> slowWithdrawal = writerA.execute(id,
					(s) -> withdraw(s, 100));
			// A's claim is committed (the head moved), its event not yet visible.
			await().alias("A's claim is committed")
				.atMost(Duration.ofSeconds(10))
				.until(() -> result(this.journal.highestSequenceNr(id)) == head + 1);
			assertThatExceptionOfType(InsufficientFunds.class)
				.as("round %d: B decides on A's withdrawal", round)
				.isThrownBy(() -> result(writerB.execute(id, (s) -> withdraw(s, 100))))
				.withMessage("insufficient funds: 0");
			assertThat(result(slowWithdrawal).state().state()).isZero();
		}
		List<Long> balances = new ArrayList<>();
		long[] balance = { 0 };
		result(this.journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (PersistentEvent<AccountEvent> e) -> {
			balance[0] = new Account().applyEvent(balance[0], e.payload());
			balances.add(balance[0]);
		}));
		assertThat(balances).as("the journal's running balance").allSatisfy((b) -> assertThat(b).isNotNegative());
		assertThat(result(writerB.load(id)).state()).isEqualTo(balance[0]).isZero();
	}

	/** The same account, with snapshots. */
	static final class SnapshottedAccount implements EventSourcedEntity<Long, AccountEvent> {

		private final Account account = new Account();

		@Override
		public Long emptyState() {
			return 0L;
		}

		@Override
		public Long applyEvent(Long balance, AccountEvent event) {
			return this.account.applyEvent(balance, event);
		}

		@Override
		public Class<AccountEvent> eventType() {
			return AccountEvent.class;
		}

		@Override
		public Class<Long> stateType() {
			return Long.class;
		}

		@Override
		public int snapshotEvery() {
			return 2;
		}

	}

	/**
	 * The TypeScript side saved the newest snapshot in its own state shape: the entity steps over it (to our
	 * older snapshot, else the events) instead of failing every command.
	 */
	@Test
	void aSnapshotInAnotherShapeIsSteppedOverNotAFailedCommand() {
		CassandraSnapshotStore snapshots = CassandraSnapshotStore.create(this.keyspace.session(), this.options,
				new JacksonEventSerializer());
		EntityRepository<Long, AccountEvent> repository = EntityRepository.create(this.journal, snapshots,
				new SnapshottedAccount(), 3);
		String id = "account-foreign-snapshot-" + System.nanoTime();
		result(repository.execute(id, (s) -> List.of(new Opened(), new Deposited(100))));
		// The snapshot is saved after the command completes (it never delays the caller): wait for it, so the
		// foreign row below replaces ours rather than being replaced by it.
		await().alias("our snapshot at 2 is stored")
			.atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(result(snapshots.loadLatest(id, Long.MAX_VALUE, Long.class))).get()
				.satisfies((snapshot) -> assertThat(snapshot.sequenceNr()).isEqualTo(2)));
		this.keyspace.session()
			.execute("INSERT INTO snapshots (persistence_id, sequence_nr, timestamp, payload) VALUES (?, ?, ?, ?)", id,
					2L, System.currentTimeMillis(), "{\"balance\":100,\"owner\":\"ts\"}");

		CommandResult<Long, AccountEvent> withdrawn = result(repository.execute(id, (s) -> withdraw(s, 30)));
		assertThat(withdrawn.state().state()).isEqualTo(70);
		assertThat(withdrawn.state().sequenceNr()).isEqualTo(3);
		assertThat(result(repository.load(id)).state()).isEqualTo(70);
	}

	/** Commands and event handlers are user code: they never run on (and never stall) a driver I/O thread. */
	@Test
	void commandsAndEventHandlersRunOnTheRepositorysExecutorNotOnDriverThreads() {
		java.util.Set<String> threads = java.util.concurrent.ConcurrentHashMap.newKeySet();
		EventSourcedEntity<Long, AccountEvent> recording = new Account() {

			@Override
			public Long applyEvent(Long balance, AccountEvent event) {
				threads.add(Thread.currentThread().getName());
				return super.applyEvent(balance, event);
			}

		};
		EntityRepository<Long, AccountEvent> repository = EntityRepository.create(this.journal, null, recording, 3);
		String id = "account-threads-" + System.nanoTime();
		result(repository.execute(id, (s) -> List.of(new Opened(), new Deposited(10))));
		for (int i = 0; i < 5; i++) {
			result(repository.execute(id, (s) -> {
				threads.add(Thread.currentThread().getName());
				return List.of(new Deposited(1));
			}));
		}
		assertThat(threads).isNotEmpty()
			.allSatisfy((name) -> assertThat(name).doesNotMatch("s\\d+-(io|admin|timer)-\\d+"));

		java.util.concurrent.ExecutorService own = java.util.concurrent.Executors
			.newSingleThreadExecutor((task) -> new Thread(task, "own-commands"));
		try {
			threads.clear();
			EntityRepository<Long, AccountEvent> onOwn = repository.withExecutor(own);
			result(onOwn.execute(id, (s) -> {
				threads.add(Thread.currentThread().getName());
				return List.of(new Deposited(1));
			}));
			assertThat(threads).containsOnly("own-commands");
		}
		finally {
			own.shutdown();
		}
	}

	/**
	 * Claimed numbers whose claim is older than the in-flight wait are a crash gap: the load does not wait for
	 * them, and labels the state with the head so the next append continues after it.
	 */
	@Test
	void anOldCrashGapIsSteppedOverAtOnceAndTheStateIsLabelledWithTheHead() {
		EntityRepository<Long, AccountEvent> repository = EntityRepository.create(this.journal, null, new Account(), 3);
		String id = "account-crash-gap-" + System.nanoTime();
		result(repository.execute(id, (s) -> List.of(new Opened(), new Deposited(100))));
		this.keyspace.session()
			.execute("UPDATE metadata SET max_sequence_nr = 4, updated_at = ? WHERE persistence_id = ?",
					System.currentTimeMillis() - Duration.ofHours(1).toMillis(), id);

		EntityState<Long> loaded = result(repository.load(id), Duration.ofSeconds(10));
		assertThat(loaded.state()).isEqualTo(100);
		assertThat(loaded.sequenceNr()).isEqualTo(4);
		CommandResult<Long, AccountEvent> next = result(repository.execute(id, (s) -> withdraw(s, 40)),
				Duration.ofSeconds(10));
		assertThat(next.attempts()).isEqualTo(1);
		assertThat(next.state().sequenceNr()).isEqualTo(5);
		assertThat(next.state().state()).isEqualTo(60);
	}

}
