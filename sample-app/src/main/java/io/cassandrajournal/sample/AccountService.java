package io.cassandrajournal.sample;

import java.util.List;

import org.springframework.stereotype.Service;

import io.cassandrajournal.entity.CommandResult;
import io.cassandrajournal.entity.EntityRepositories;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.entity.EntityState;

/**
 * Runs account commands through the event-sourced entity repository: the business rules are checked
 * against the entity's state, and conflicting writers are retried.
 */
@Service
public class AccountService {

	private final EntityRepository<Account.State, AccountEvent> accounts;

	public AccountService(EntityRepositories repositories) {
		// journal.cassandra.entities.* in application.yml: 5 retries, 10,000 cached accounts. Hot accounts skip
		// the load: the append's LWT catches a stale cached state, and a rejection on cached state is checked
		// again against fresh state.
		this.accounts = repositories.create(new Account());
	}

	public EntityState<Account.State> open(String id) {
		return join(this.accounts.execute(Account.persistenceId(id), (current) -> {
			if (current.state().open()) {
				throw new AccountExceptions.AlreadyExists(id);
			}
			return List.of(new AccountEvent.Opened());
		})).state();
	}

	public EntityState<Account.State> deposit(String id, long amount) {
		return join(this.accounts.execute(Account.persistenceId(id), (current) -> {
			requireOpen(id, current);
			long balance = current.state().balance();
			if (balance > Long.MAX_VALUE - amount) {
				throw new AccountExceptions.BalanceLimit(id, balance, amount);
			}
			return List.of(new AccountEvent.Deposited(amount));
		})).state();
	}

	public EntityState<Account.State> withdraw(String id, long amount) {
		return join(this.accounts.execute(Account.persistenceId(id), (current) -> {
			requireOpen(id, current);
			if (current.state().balance() < amount) {
				throw new AccountExceptions.InsufficientFunds(id, current.state().balance(), amount);
			}
			return List.of(new AccountEvent.Withdrawn(amount));
		})).state();
	}

	public EntityState<Account.State> get(String id) {
		EntityState<Account.State> state = this.accounts.load(Account.persistenceId(id)).toCompletableFuture().join();
		requireOpen(id, state);
		return state;
	}

	private static void requireOpen(String id, EntityState<Account.State> state) {
		if (!state.state().open()) {
			throw new AccountExceptions.NotFound(id);
		}
	}

	private static CommandResult<Account.State, AccountEvent> join(
			java.util.concurrent.CompletionStage<CommandResult<Account.State, AccountEvent>> stage) {
		try {
			return stage.toCompletableFuture().join();
		}
		catch (java.util.concurrent.CompletionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			throw ex;
		}
	}

}
