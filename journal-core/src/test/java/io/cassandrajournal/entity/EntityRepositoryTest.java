package io.cassandrajournal.entity;

import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.inmemory.InMemorySnapshotStore;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.JournalConcurrencyException;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.AccountEvent.Opened;
import io.cassandrajournal.testing.AccountEvent.Withdrawn;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class EntityRepositoryTest {

	record Balance(boolean open, long amount) {
	}

	static final class Account implements EventSourcedEntity<Balance, AccountEvent> {

		@Override
		public Balance emptyState() {
			return new Balance(false, 0);
		}

		@Override
		public Balance applyEvent(Balance state, AccountEvent event) {
			if (event instanceof Deposited d) {
				return new Balance(state.open(), state.amount() + d.amount());
			}
			if (event instanceof Withdrawn w) {
				return new Balance(state.open(), state.amount() - w.amount());
			}
			return new Balance(true, 0);
		}

		@Override
		public Set<String> tagsFor(AccountEvent event) {
			return Set.of("account");
		}

		@Override
		public Class<AccountEvent> eventType() {
			return AccountEvent.class;
		}

		@Override
		public Class<Balance> stateType() {
			return Balance.class;
		}

		@Override
		public int snapshotEvery() {
			return 3;
		}

	}

	private final InMemoryJournal journal = new InMemoryJournal();

	private final InMemorySnapshotStore snapshots = new InMemorySnapshotStore();

	private final EntityRepository<Balance, AccountEvent> repository = EntityRepository.create(this.journal,
			this.snapshots, new Account(), 3);

	@Test
	void commandsAppendEventsThatFoldIntoState() {
		result(this.repository.execute("account-1", (s) -> List.of(new Opened())));
		CommandResult<Balance, AccountEvent> deposit = result(
				this.repository.execute("account-1", (s) -> List.of(new Deposited(30), new Deposited(12))));
		assertThat(deposit.state().state()).isEqualTo(new Balance(true, 42));
		assertThat(deposit.state().sequenceNr()).isEqualTo(3);
		assertThat(result(this.snapshots.loadLatest("account-1", Long.MAX_VALUE, Balance.class))).get()
			.satisfies((snap) -> assertThat(snap.sequenceNr()).isEqualTo(3));
		result(this.repository.execute("account-1", (s) -> List.of(new Withdrawn(2))));
		EntityState<Balance> loaded = result(this.repository.load("account-1"));
		assertThat(loaded.state()).isEqualTo(new Balance(true, 40));
		assertThat(loaded.sequenceNr()).isEqualTo(4);
	}

	@Test
	void aRejectingCommandAppendsNothing() {
		result(this.repository.execute("account-2", (s) -> List.of(new Opened())));
		assertThatIllegalStateException().isThrownBy(() -> result(this.repository.execute("account-2", (s) -> {
			if (s.state().amount() < 5) {
				throw new IllegalStateException("insufficient funds");
			}
			return List.of(new Withdrawn(5));
		}))).withMessage("insufficient funds");
		assertThat(result(this.journal.highestSequenceNr("account-2"))).isEqualTo(1);
	}

	@Test
	void retriesOnConflictThenGivesUp() {
		result(this.repository.execute("account-3", (s) -> List.of(new Opened())));
		AtomicInteger runs = new AtomicInteger();
		CommandResult<Balance, AccountEvent> result = result(this.repository.execute("account-3", (s) -> {
			if (runs.incrementAndGet() == 1) {
				// another writer appends between this command's load and its append
				result(this.journal.append("account-3", s.sequenceNr(), List.of(EventToAppend.of(new Deposited(100)))));
			}
			return List.of(new Deposited(1));
		}));
		assertThat(result.attempts()).isEqualTo(2);
		assertThat(result.state().state().amount()).isEqualTo(101);

		EntityRepository<Balance, AccountEvent> noRetries = EntityRepository.create(this.journal, this.snapshots,
				new Account(), 0);
		assertThatExceptionOfType(JournalConcurrencyException.class).isThrownBy(() -> result(noRetries.execute("account-3",
				(s) -> {
					result(this.journal.append("account-3", s.sequenceNr(), List.of(EventToAppend.of(new Deposited(1)))));
					return List.of(new Deposited(1));
				})));
	}

	/** A journal that counts the calls it receives, by method name. */
	private static io.cassandrajournal.journal.Journal counting(io.cassandrajournal.journal.Journal delegate,
			java.util.Map<String, Integer> calls) {
		return (io.cassandrajournal.journal.Journal) java.lang.reflect.Proxy.newProxyInstance(
				EntityRepositoryTest.class.getClassLoader(), new Class<?>[] { io.cassandrajournal.journal.Journal.class },
				(proxy, method, args) -> {
					calls.merge(method.getName(), 1, Integer::sum);
					try {
						return method.invoke(delegate, args);
					}
					catch (java.lang.reflect.InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	@Test
	void theCacheSkipsTheLoadOfAnEntityThisRepositoryJustWrote() {
		java.util.Map<String, Integer> calls = new java.util.concurrent.ConcurrentHashMap<>();
		EntityRepository<Balance, AccountEvent> cached = EntityRepository
			.create(counting(this.journal, calls), this.snapshots, new Account(), 3)
			.withCache(100);
		result(cached.execute("cached-1", (s) -> List.of(new Opened())));
		calls.clear();
		for (int i = 0; i < 10; i++) {
			result(cached.execute("cached-1", (s) -> List.of(new Deposited(1))));
		}
		assertThat(calls).as("ten appends, no head reads or replays").containsOnlyKeys("append")
			.containsEntry("append", 10);
		assertThat(result(this.repository.load("cached-1")).state()).isEqualTo(new Balance(true, 10));
	}

	@Test
	void aStaleCacheEntryIsCaughtByTheAppendAndReloaded() {
		EntityRepository<Balance, AccountEvent> cached = this.repository.withCache(100);
		result(cached.execute("cached-2", (s) -> List.of(new Opened(), new Deposited(5))));
		// Another process appends behind this repository's back.
		result(this.journal.append("cached-2", 2, List.of(EventToAppend.of(new Deposited(100)))));
		CommandResult<Balance, AccountEvent> next = result(cached.execute("cached-2", (s) -> List.of(new Deposited(1))));
		assertThat(next.attempts()).as("the stale state lost the append, the fresh one won").isEqualTo(2);
		assertThat(next.state().state()).isEqualTo(new Balance(true, 106));
		assertThat(next.state().sequenceNr()).isEqualTo(4);
	}

	@Test
	void aRejectionOnCachedStateIsCheckedAgainstFreshState() {
		EntityRepository<Balance, AccountEvent> cached = this.repository.withCache(100);
		result(cached.execute("cached-3", (s) -> List.of(new Opened())));
		result(this.journal.append("cached-3", 1, List.of(EventToAppend.of(new Deposited(50)))));
		java.util.function.Function<EntityState<Balance>, List<AccountEvent>> withdraw20 = (s) -> {
			if (s.state().amount() < 20) {
				throw new IllegalStateException("insufficient funds: " + s.state().amount());
			}
			return List.of(new Withdrawn(20));
		};
		CommandResult<Balance, AccountEvent> done = result(cached.execute("cached-3", withdraw20));
		assertThat(done.state().state().amount()).as("cached balance 0 would have rejected").isEqualTo(30);
		result(cached.execute("cached-3", withdraw20));
		assertThatIllegalStateException().isThrownBy(() -> result(cached.execute("cached-3", withdraw20)))
			.withMessage("insufficient funds: 10");
		assertThat(result(this.journal.highestSequenceNr("cached-3"))).isEqualTo(4);
	}

	@Test
	void theCacheKeepsOnlyTheMostRecentlyUsedEntities() {
		java.util.Map<String, Integer> calls = new java.util.concurrent.ConcurrentHashMap<>();
		EntityRepository<Balance, AccountEvent> cached = EntityRepository
			.create(counting(this.journal, calls), null, new NoSnapshots(), 3)
			.withCache(2);
		for (String id : List.of("lru-a", "lru-b", "lru-c")) {
			result(cached.execute(id, (s) -> List.of(new Opened())));
		}
		calls.clear();
		result(cached.execute("lru-c", (s) -> List.of(new Deposited(1))));
		result(cached.execute("lru-b", (s) -> List.of(new Deposited(1))));
		assertThat(calls).containsOnlyKeys("append");
		result(cached.execute("lru-a", (s) -> List.of(new Deposited(1))));
		assertThat(calls).as("lru-a was evicted: loaded again").containsKey("replayContiguous");
	}

	static final class NoSnapshots implements EventSourcedEntity<Balance, AccountEvent> {

		private final Account account = new Account();

		@Override
		public Balance emptyState() {
			return this.account.emptyState();
		}

		@Override
		public Balance applyEvent(Balance state, AccountEvent event) {
			return this.account.applyEvent(state, event);
		}

		@Override
		public Set<String> tagsFor(AccountEvent event) {
			return Set.of();
		}

		@Override
		public Class<AccountEvent> eventType() {
			return AccountEvent.class;
		}

		@Override
		public Class<Balance> stateType() {
			return Balance.class;
		}

	}

}
