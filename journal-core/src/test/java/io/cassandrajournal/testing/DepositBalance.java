package io.cassandrajournal.testing;

import io.cassandrajournal.entity.EventSourcedEntity;
import io.cassandrajournal.testing.AccountEvent.Deposited;

/**
 * A balance of deposits (other events leave it as it is), for tests of entity loads, snapshots and retention.
 *
 * @param snapshotEvery a snapshot every this many events, {@code 0} for none
 */
public record DepositBalance(int snapshotEvery) implements EventSourcedEntity<Long, AccountEvent> {

	/** Without snapshots. */
	public DepositBalance() {
		this(0);
	}

	@Override
	public Long emptyState() {
		return 0L;
	}

	@Override
	public Long applyEvent(Long balance, AccountEvent event) {
		return (event instanceof Deposited deposited) ? balance + deposited.amount() : balance;
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
		return this.snapshotEvery;
	}

}
