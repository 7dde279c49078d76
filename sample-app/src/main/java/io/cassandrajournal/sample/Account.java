package io.cassandrajournal.sample;

import java.util.Set;

import io.cassandrajournal.entity.EventSourcedEntity;

/**
 * The account entity: its state is whether it is open and its balance.
 */
public final class Account implements EventSourcedEntity<Account.State, AccountEvent> {

	/** The tag every account event carries. */
	public static final String TAG = "account";

	/**
	 * @param open whether the account was opened
	 * @param balance its balance
	 */
	public record State(boolean open, long balance) {
	}

	/**
	 * @param accountId the account id from the URL
	 * @return the persistenceId, in the reference's format
	 */
	public static String persistenceId(String accountId) {
		return "account-" + accountId;
	}

	/**
	 * @param persistenceId a persistenceId of the form {@code account-{id}}
	 * @return the account id
	 */
	public static String accountId(String persistenceId) {
		return persistenceId.startsWith("account-") ? persistenceId.substring("account-".length()) : persistenceId;
	}

	@Override
	public State emptyState() {
		return new State(false, 0);
	}

	@Override
	public State applyEvent(State state, AccountEvent event) {
		if (event instanceof AccountEvent.Deposited deposited) {
			return new State(state.open(), state.balance() + deposited.amount());
		}
		if (event instanceof AccountEvent.Withdrawn withdrawn) {
			return new State(state.open(), state.balance() - withdrawn.amount());
		}
		return new State(true, state.balance());
	}

	@Override
	public Set<String> tagsFor(AccountEvent event) {
		return Set.of(TAG);
	}

	@Override
	public Class<AccountEvent> eventType() {
		return AccountEvent.class;
	}

	@Override
	public Class<State> stateType() {
		return State.class;
	}

	@Override
	public int snapshotEvery() {
		return 100;
	}

}
