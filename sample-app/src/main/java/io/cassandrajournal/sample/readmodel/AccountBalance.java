package io.cassandrajournal.sample.readmodel;

import org.springframework.data.cassandra.core.mapping.Column;
import org.springframework.data.cassandra.core.mapping.PrimaryKey;
import org.springframework.data.cassandra.core.mapping.Table;

/**
 * A row of the balances read model: an account's balance and the last event folded into it.
 */
@Table("account_balances")
public class AccountBalance {

	@PrimaryKey("account_id")
	private String accountId;

	@Column("balance")
	private long balance;

	@Column("last_sequence_nr")
	private long lastSequenceNr;

	public AccountBalance() {
	}

	public AccountBalance(String accountId, long balance, long lastSequenceNr) {
		this.accountId = accountId;
		this.balance = balance;
		this.lastSequenceNr = lastSequenceNr;
	}

	public String getAccountId() {
		return this.accountId;
	}

	public long getBalance() {
		return this.balance;
	}

	public long getLastSequenceNr() {
		return this.lastSequenceNr;
	}

}
