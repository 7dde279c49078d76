package io.cassandrajournal.sample.readmodel;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.journal.ReplayResult;
import io.cassandrajournal.sample.Account;
import io.cassandrajournal.sample.AccountEvent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyString;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;

/**
 * The balances projection when an event arrives ahead of the row (events 11 and 12 of another writer claimed,
 * not yet visible, 13 delivered by the tag feed): the row never records a sequence number it did not fold.
 */
class AccountProjectionsTest {

	private final Map<String, AccountBalance> rows = new ConcurrentHashMap<>();

	private final InMemoryJournal store = new InMemoryJournal();

	private final String persistenceId = Account.persistenceId("a-1");

	private final List<PersistentEvent<AccountEvent>> stored = new ArrayList<>();

	private AccountProjections projections(Journal journal) {
		AccountBalanceRepository balances = mock(AccountBalanceRepository.class);
		when(balances.findById(anyString())).thenAnswer((call) -> Optional.ofNullable(this.rows.get(call.getArgument(0))));
		when(balances.save(any(AccountBalance.class))).thenAnswer((call) -> {
			AccountBalance row = call.getArgument(0);
			this.rows.put(row.getAccountId(), row);
			return row;
		});
		return new AccountProjections(balances, mock(StatementRepository.class), journal);
	}

	/** Thirteen deposits of 1..13; the balances row has folded 1..10 (55). */
	private void thirteenDepositsTenFolded() {
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 1; i <= 13; i++) {
			events.add(EventToAppend.of(new AccountEvent.Deposited(i), Account.TAG));
		}
		this.store.append(this.persistenceId, 0, events).toCompletableFuture().join();
		this.store.replay(this.persistenceId, 1, 13, AccountEvent.class, this.stored::add).toCompletableFuture().join();
		this.rows.put("a-1", new AccountBalance("a-1", 55, 10));
	}

	/**
	 * A journal on which 11 and 12 are claimed but not visible: plain replays do not see them yet, the contiguous
	 * replay waits for them (here: delivers them, as after the wait) or, with {@code coveredTo} below them, did
	 * not get them.
	 */
	private Journal elevenAndTwelveInFlight(long contiguousCoveredTo) {
		return (Journal) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Journal.class },
				(proxy, method, args) -> {
					if (method.getName().equals("replay")) {
						return CompletableFuture.completedFuture(0L);
					}
					if (method.getName().equals("replayContiguous")) {
						@SuppressWarnings("unchecked")
						Consumer<PersistentEvent<AccountEvent>> consumer = (Consumer<PersistentEvent<AccountEvent>>) args[4];
						long from = (long) args[1];
						for (long n = from; n <= contiguousCoveredTo; n++) {
							consumer.accept(this.stored.get((int) n - 1));
						}
						return CompletableFuture.completedFuture(
								new ReplayResult(contiguousCoveredTo, contiguousCoveredTo, contiguousCoveredTo, List.of()));
					}
					try {
						return method.invoke(this.store, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	@Test
	void anEventAheadOfTheRowFoldsTheClaimedEventsBeforeIt() {
		thirteenDepositsTenFolded();
		projections(elevenAndTwelveInFlight(12)).balance(this.stored.get(12));
		AccountBalance row = this.rows.get("a-1");
		assertThat(row.getLastSequenceNr()).isEqualTo(13);
		assertThat(row.getBalance()).as("1 + ... + 13").isEqualTo(91);
	}

	@Test
	void theRowNeverRecordsASequenceNumberItDidNotFold() {
		thirteenDepositsTenFolded();
		AccountProjections projections = projections(elevenAndTwelveInFlight(11));
		assertThatIllegalStateException().isThrownBy(() -> projections.balance(this.stored.get(12)))
			.withMessageContaining("12..12");
		AccountBalance row = this.rows.get("a-1");
		assertThat(row.getLastSequenceNr()).isEqualTo(11);
		assertThat(row.getBalance()).isEqualTo(66);
	}

}
