package io.cassandrajournal.testing.faults;

import java.util.Set;

import io.cassandrajournal.entity.EventSourcedEntity;

/**
 * A bank account of a fault run: its balance must never be negative (the invariant the checker folds the
 * journal for); commands that would overdraw are rejected.
 *
 * @param balance the balance
 */
public record Account(long balance) {

	/** The entity definition: tag {@code bank} (withdrawals also {@code withdrawal}), a snapshot every 5 events. */
	static final class Entity implements EventSourcedEntity<Account, FaultEvent> {

		@Override
		public Account emptyState() {
			return new Account(0);
		}

		@Override
		public Account applyEvent(Account state, FaultEvent event) {
			return new Account(state.balance() + event.delta());
		}

		@Override
		public Class<FaultEvent> eventType() {
			return FaultEvent.class;
		}

		@Override
		public Class<Account> stateType() {
			return Account.class;
		}

		@Override
		public Set<String> tagsFor(FaultEvent event) {
			return (event.delta() < 0) ? Set.of(FaultRun.BANK_TAG, FaultRun.WITHDRAWAL_TAG) : Set.of(FaultRun.BANK_TAG);
		}

		@Override
		public int snapshotEvery() {
			return 5;
		}

	}

	/** A withdrawal larger than the balance: no stack trace, it is an expected outcome. */
	static final class Overdraft extends RuntimeException {

		private static final long serialVersionUID = 1L;

		Overdraft() {
			super("overdraft", null, false, false);
		}

	}

}
