package io.cassandrajournal.docs;

import java.time.Instant;
import java.util.Set;
import java.util.concurrent.CompletionException;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.entity.EntityRepositories;
import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.PersistentEvent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Runs the README's quick-start code (the snippets themselves, see {@link ReadmeSnippetsTest}) on the in-memory
 * journal.
 */
class QuickStartTest {

	@Test
	void theEntityDepositsWithdrawsAndRejectsAnOverdraftWithoutAppending() {
		Accounts accounts = new Accounts(new EntityRepositories(new InMemoryJournal(), null, 3, 100));
		assertThat(accounts.deposit("alice", 25).toCompletableFuture().join()).isEqualTo(25L);
		assertThat(accounts.withdraw("alice", 10).toCompletableFuture().join()).isEqualTo(15L);
		assertThatExceptionOfType(CompletionException.class)
			.isThrownBy(() -> accounts.withdraw("alice", 100).toCompletableFuture().join())
			.withCauseInstanceOf(InsufficientFunds.class);
		assertThat(accounts.deposit("alice", 1).toCompletableFuture().join()).isEqualTo(16L);
	}

	@Test
	void theReadModelCountsEachEventOnceEvenWhenRedelivered() {
		BalanceView view = new BalanceView();
		view.onDeposited(event(1, new Deposited(25)));
		view.onWithdrawn(event(2, new Withdrawn(10)));
		view.onWithdrawn(event(2, new Withdrawn(10)));   // redelivered
		assertThat(view.balance("account-alice")).isEqualTo(15L);
	}

	private static <E> PersistentEvent<E> event(long sequenceNr, E payload) {
		return new PersistentEvent<>("account-alice", sequenceNr, Instant.now(), Set.of("account"), payload);
	}

}
