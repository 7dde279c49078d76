package io.cassandrajournal.spring.boot.health;

import java.util.ArrayList;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;

/**
 * UP when Cassandra answers and every table the journal needs exists in its keyspace; DOWN (with the
 * missing tables or the error) otherwise. Checked on each call, never at start-up, so a briefly
 * unreachable Cassandra does not stop the application from starting.
 */
public class JournalHealthIndicator extends AbstractHealthIndicator {

	private final CqlSession session;

	private final CassandraJournalOptions options;

	public JournalHealthIndicator(CqlSession session, CassandraJournalOptions options) {
		super("Cassandra journal health check failed");
		this.session = session;
		this.options = options;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		Row local = this.session.execute(SimpleStatement.newInstance("SELECT release_version FROM system.local")).one();
		String keyspace = this.options.requireKeyspace();
		List<String> missing = new ArrayList<>();
		for (String table : CassandraJournal.requiredTables(this.options)) {
			Row row = this.session.execute(SimpleStatement.newInstance(
					"SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?", keyspace,
					table)).one();
			if (row == null) {
				missing.add(table);
			}
		}
		builder.withDetail("keyspace", keyspace)
			.withDetail("cassandraVersion", (local != null) ? local.getString(0) : "unknown")
			.withDetail("lightweightTransactions", this.options.lightweightTransactions())
			.withDetail("tagIndex", this.options.useTagIndex())
			.withDetail("tagBucketing", this.options.tagBucketing().name());
		if (missing.isEmpty()) {
			builder.up();
		}
		else {
			builder.down().withDetail("missingTables", missing);
		}
	}

}
