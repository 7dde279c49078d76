package io.cassandrajournal.sample.readmodel;

import java.util.ArrayList;
import java.util.List;

import org.springframework.stereotype.Component;

import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.journal.ReplayResult;
import io.cassandrajournal.sample.Account;
import io.cassandrajournal.sample.AccountEvent;
import io.cassandrajournal.spring.boot.projection.ProjectionHandler;

/**
 * The read models, fed by two projections over the {@code account} tag.
 * <p>
 * Balances are idempotent by sequence number: an event at or below the row's last sequence number was
 * already folded in and is ignored (at-least-once delivery re-delivers after a restart). If an event
 * arrives ahead of the next expected one (a late event of the same account still in flight), the missing
 * events are read from the journal, which is the authority for an account's order, and folded in first; the
 * journal's contiguous replay waits for events claimed but not yet visible, and the row's last sequence number
 * never passes an event that was not folded.
 * Statements are keyed by (account, sequence number), so re-writing a line is harmless.
 */
@Component
public class AccountProjections {

	private final AccountBalanceRepository balances;

	private final StatementRepository statements;

	private final Journal journal;

	public AccountProjections(AccountBalanceRepository balances, StatementRepository statements, Journal journal) {
		this.balances = balances;
		this.statements = statements;
		this.journal = journal;
	}

	@ProjectionHandler(name = "balances", tag = Account.TAG)
	void balance(PersistentEvent<AccountEvent> event) {
		String accountId = Account.accountId(event.persistenceId());
		AccountBalance current = this.balances.findById(accountId).orElse(new AccountBalance(accountId, 0, 0));
		if (event.sequenceNr() <= current.getLastSequenceNr()) {
			return;
		}
		long balance = current.getBalance();
		if (event.sequenceNr() > current.getLastSequenceNr() + 1) {
			// Events between the row and this one: read them in order. The contiguous replay waits for events
			// another writer has claimed but not yet made visible; only a crash gap (never written) is stepped over.
			List<PersistentEvent<AccountEvent>> missing = new ArrayList<>();
			ReplayResult replayed = this.journal
				.replayContiguous(event.persistenceId(), current.getLastSequenceNr() + 1, event.sequenceNr() - 1,
						AccountEvent.class, missing::add)
				.toCompletableFuture()
				.join();
			for (PersistentEvent<AccountEvent> each : missing) {
				balance += delta(each.payload());
			}
			if (replayed.coveredTo() < event.sequenceNr() - 1) {
				// Never store a lastSequenceNr past what was folded: keep what was read, and let the projection's
				// recovery deliver this event again.
				this.balances.save(new AccountBalance(accountId, balance, replayed.coveredTo()));
				throw new IllegalStateException("Events " + (replayed.coveredTo() + 1) + ".." + (event.sequenceNr() - 1)
						+ " of " + event.persistenceId() + " are not readable yet; " + event.sequenceNr() + " waits");
			}
		}
		balance += delta(event.payload());
		this.balances.save(new AccountBalance(accountId, balance, event.sequenceNr()));
	}

	@ProjectionHandler(name = "statements", tag = Account.TAG)
	void statement(PersistentEvent<AccountEvent> event) {
		AccountEvent payload = event.payload();
		String kind = (payload instanceof AccountEvent.Deposited) ? "deposited"
				: (payload instanceof AccountEvent.Withdrawn) ? "withdrawn" : "opened";
		this.statements.save(new StatementEntry(Account.accountId(event.persistenceId()), event.sequenceNr(), kind,
				Math.abs(delta(payload)), event.timestamp()));
	}

	static long delta(AccountEvent event) {
		if (event instanceof AccountEvent.Deposited deposited) {
			return deposited.amount();
		}
		if (event instanceof AccountEvent.Withdrawn withdrawn) {
			return -withdrawn.amount();
		}
		return 0;
	}

}
