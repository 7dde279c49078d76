package io.cassandrajournal.testsupport;

import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Cassandra behaviour the journal stands on, checked against whatever real Cassandra a subclass
 * provides: conditional inserts and updates (Paxos) and unlogged batches.
 */
abstract class CqlBasicsContract {

	protected abstract CqlSession session();

	@Test
	void lightweightTransactionsRejectTheLoser() {
		CqlSession session = session();
		session.execute("CREATE TABLE IF NOT EXISTS heads (id text PRIMARY KEY, seq bigint)");
		PreparedStatement insert = session.prepare("INSERT INTO heads (id, seq) VALUES (?, ?) IF NOT EXISTS");
		PreparedStatement update = session.prepare("UPDATE heads SET seq = ? WHERE id = ? IF seq = ?");

		assertThat(session.execute(insert.bind("a", 1L)).wasApplied()).isTrue();
		ResultSet duplicate = session.execute(insert.bind("a", 5L));
		assertThat(duplicate.wasApplied()).isFalse();
		assertThat(duplicate.one().getLong("seq")).isEqualTo(1L);

		assertThat(session.execute(update.bind(2L, "a", 1L)).wasApplied()).isTrue();
		ResultSet stale = session.execute(update.bind(3L, "a", 1L));
		assertThat(stale.wasApplied()).isFalse();
		assertThat(stale.one().getLong("seq")).as("a failed CAS returns the current value").isEqualTo(2L);

		ResultSet missing = session.execute(update.bind(1L, "nobody", 0L));
		assertThat(missing.wasApplied()).isFalse();
		assertThat(missing.getColumnDefinitions().contains("seq")).as("no current value for a missing row").isFalse();
	}

	@Test
	void unloggedBatchWritesEveryRowOfAPartition() {
		CqlSession session = session();
		session.execute("CREATE TABLE IF NOT EXISTS rows_by_key (k text, n int, v text, PRIMARY KEY (k, n))");
		PreparedStatement insert = session.prepare("INSERT INTO rows_by_key (k, n, v) VALUES (?, ?, ?)");
		BatchStatement batch = BatchStatement.newInstance(BatchType.UNLOGGED);
		for (int i = 0; i < 10; i++) {
			batch = batch.add(insert.bind("p", i, "v" + i));
		}
		session.execute(batch);
		List<Row> rows = session.execute("SELECT n FROM rows_by_key WHERE k = 'p'").all();
		assertThat(rows).extracting((row) -> row.getInt("n")).containsExactly(0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
	}

}
