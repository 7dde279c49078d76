package io.cassandrajournal.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * The raw side: the same CQL the journal sends (claim, unlogged batch, id row), issued directly with the
 * driver, with no validation, serialization, listeners or metrics.
 */
final class RawJournal {

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final PreparedStatement claimFirst;

	private final PreparedStatement claimNext;

	private final PreparedStatement insertEvent;

	private final PreparedStatement insertId;

	RawJournal(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		this.options = options;
		String ks = options.requireKeyspace();
		this.claimFirst = prepare("INSERT INTO " + ks + ".metadata (persistence_id, max_sequence_nr, updated_at) "
				+ "VALUES (?, ?, ?) IF NOT EXISTS", false);
		this.claimNext = prepare("UPDATE " + ks + ".metadata SET max_sequence_nr = ?, updated_at = ? "
				+ "WHERE persistence_id = ? IF max_sequence_nr = ?", false);
		this.insertEvent = prepare("INSERT INTO " + ks + ".events (persistence_id, partition_nr, sequence_nr, timestamp, "
				+ "payload, tags) VALUES (?, ?, ?, ?, ?, ?)", true);
		this.insertId = prepare("INSERT INTO " + ks + ".all_persistence_ids (tag, persistence_id) VALUES (?, ?)", true);
	}

	private PreparedStatement prepare(String cql, boolean idempotent) {
		return this.session.prepare(SimpleStatement.newInstance(cql)
			.setConsistencyLevel(this.options.consistency())
			.setIdempotent(idempotent));
	}

	/** LWT claim, then one unlogged batch (and the id row for a new persistenceId). */
	CompletionStage<Void> append(String pid, long expected, int events) {
		long now = System.currentTimeMillis();
		long last = expected + events;
		CompletionStage<?> claim = (expected == 0)
				? this.session.executeAsync(this.claimFirst.bind(pid, last, now))
				: this.session.executeAsync(this.claimNext.bind(last, now, pid, expected));
		return claim.thenCompose((rs) -> write(pid, expected, events, now));
	}

	/** The unlogged batch alone (the no-LWT workload's raw side). */
	CompletionStage<Void> write(String pid, long expected, int events, long now) {
		BatchStatementBuilder batch = BatchStatement.builder(BatchType.UNLOGGED);
		for (int i = 1; i <= events; i++) {
			long seq = expected + i;
			batch.addStatement(this.insertEvent.bind(pid, (seq - 1) / this.options.partitionSize(), seq, now, Bench.PAYLOAD,
					Set.<String>of()));
		}
		List<CompletableFuture<?>> writes = new ArrayList<>();
		writes.add(this.session.executeAsync(batch.setIdempotence(true).setConsistencyLevel(this.options.consistency()).build())
			.toCompletableFuture());
		if (expected == 0) {
			writes.add(this.session.executeAsync(this.insertId.bind("_all", pid)).toCompletableFuture());
		}
		return Bench.allOf(writes);
	}

}
