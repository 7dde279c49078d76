package io.cassandrajournal.entity;

import java.util.Set;

/**
 * Defines an event-sourced entity type: its empty state, how each event changes the state, which tags an
 * event is indexed under, and how often a snapshot is taken. Stateless and shared by every entity of the
 * type; {@link EntityRepository} does the loading, deciding and appending.
 *
 * <pre>{@code
 * class AccountEntity implements EventSourcedEntity<Account, AccountEvent> {
 *     public Account emptyState() { return Account.EMPTY; }
 *     public Account applyEvent(Account state, AccountEvent event) { return state.apply(event); }
 *     public Set<String> tagsFor(AccountEvent event) { return Set.of("account"); }
 *     public Class<AccountEvent> eventType() { return AccountEvent.class; }
 *     public Class<Account> stateType() { return Account.class; }
 *     public int snapshotEvery() { return 100; }
 * }
 * }</pre>
 *
 * @param <S> the state type (immutable, serializable to JSON when snapshots are on)
 * @param <E> the event type
 */
public interface EventSourcedEntity<S, E> {

	/** @return the state of an entity without events */
	S emptyState();

	/**
	 * Applies one event. Must be a pure function: it runs on every load.
	 * @param state the state before
	 * @param event the event
	 * @return the state after
	 */
	S applyEvent(S state, E event);

	/** @return the type events are read as */
	Class<E> eventType();

	/** @return the type snapshots are read as */
	Class<S> stateType();

	/**
	 * @param event an event about to be appended
	 * @return its tags; none by default
	 */
	default Set<String> tagsFor(E event) {
		return Set.of();
	}

	/** @return take a snapshot every this many events; 0 (the default) never */
	default int snapshotEvery() {
		return 0;
	}

}
