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

}
