package io.cassandrajournal.sample.readmodel;

import java.time.Instant;

import org.springframework.data.cassandra.core.cql.PrimaryKeyType;
import org.springframework.data.cassandra.core.mapping.Column;
import org.springframework.data.cassandra.core.mapping.PrimaryKeyColumn;
import org.springframework.data.cassandra.core.mapping.Table;

/**
 * One line of an account's statement, keyed by the event's sequence number: writing it twice is harmless.
 */
@Table("account_statements")
public class StatementEntry {

	@PrimaryKeyColumn(name = "account_id", type = PrimaryKeyType.PARTITIONED)
	private String accountId;

	@PrimaryKeyColumn(name = "sequence_nr", ordinal = 0, type = PrimaryKeyType.CLUSTERED)
	private long sequenceNr;

	@Column("kind")
	private String kind;

	@Column("amount")
	private long amount;

	@Column("at")
	private Instant at;

	public StatementEntry() {
	}

	public StatementEntry(String accountId, long sequenceNr, String kind, long amount, Instant at) {
		this.accountId = accountId;
		this.sequenceNr = sequenceNr;
		this.kind = kind;
		this.amount = amount;
		this.at = at;
	}

	public String getAccountId() {
		return this.accountId;
	}

	public long getSequenceNr() {
		return this.sequenceNr;
	}

	public String getKind() {
		return this.kind;
	}

	public long getAmount() {
		return this.amount;
	}

	public Instant getAt() {
		return this.at;
	}

}
