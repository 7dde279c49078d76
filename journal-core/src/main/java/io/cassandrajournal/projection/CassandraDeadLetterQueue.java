package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.CqlNames;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.internal.TableDefinition;
import io.cassandrajournal.journal.PersistentEvent;

/**
 * A {@link DeadLetterQueue} in a Cassandra table of our own, one partition per projection:
 * <pre>
 * CREATE TABLE projection_dead_letters (projection text, persistence_id text, sequence_nr bigint,
 *   projection_key text, timestamp bigint, payload text, tags set&lt;text&gt;, error text, failed_at bigint,
 *   PRIMARY KEY ((projection), persistence_id, sequence_nr))
 * </pre>
 */
public final class CassandraDeadLetterQueue implements DeadLetterQueue {

	/** The table name used unless another is given: {@value}. */
	public static final String DEFAULT_TABLE = "projection_dead_letters";

	private final CqlSession session;

	private final Clock clock;

	private final PreparedStatement insert;

	private final PreparedStatement select;

	private final PreparedStatement delete;

	private CassandraDeadLetterQueue(CqlSession session, CassandraJournalOptions options, String table) {
		this.session = session;
		this.clock = options.clock();
		JournalStatements.Statements s = new JournalStatements.Statements(session, options);
		String name = options.requireKeyspace() + "." + table;
		this.insert = s.write("INSERT INTO " + name + " (projection, persistence_id, sequence_nr, projection_key, "
				+ "timestamp, payload, tags, error, failed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
		this.select = s.read("SELECT persistence_id, sequence_nr, projection_key, timestamp, payload, tags, error, "
				+ "failed_at FROM " + name + " WHERE projection = ? LIMIT ?");
		this.delete = s.write("DELETE FROM " + name + " WHERE projection = ? AND persistence_id = ? AND sequence_nr = ?");
	}

	/**
	 * @param session the session
	 * @param options the journal options (keyspace, consistency)
	 * @param table the table name, for example {@code projection_dead_letters}
	 * @return the queue; the table is created or checked
	 */
	public static CassandraDeadLetterQueue create(CqlSession session, CassandraJournalOptions options, String table) {
		String checked = CqlNames.check("deadLetterTable", table);
		String ks = options.requireKeyspace();
		SchemaManager.ensure(session, options, List.of(new TableDefinition(checked, "CREATE TABLE IF NOT EXISTS " + ks
				+ "." + checked + " (projection text, persistence_id text, sequence_nr bigint, projection_key text, "
				+ "timestamp bigint, payload text, tags set<text>, error text, failed_at bigint, "
				+ "PRIMARY KEY ((projection), persistence_id, sequence_nr))",
				List.of(new TableDefinition.Column("projection", "text", "partition_key", 0, "none"),
						new TableDefinition.Column("persistence_id", "text", "clustering", 0, "asc"),
						new TableDefinition.Column("sequence_nr", "bigint", "clustering", 1, "asc"),
						new TableDefinition.Column("error", "text", "regular", -1, "none")))));
		return new CassandraDeadLetterQueue(session, options, checked);
	}

	@Override
	public CompletionStage<Void> add(DeadLetter d) {
		PersistentEvent<String> e = d.event();
		return Errors.translating(this.session.executeAsync(this.insert.bind(d.projection().name(), e.persistenceId(),
				e.sequenceNr(), d.projection().key(), e.timestamp().toEpochMilli(), e.payload(), e.tags(), d.error(),
				d.failedAt().toEpochMilli())).thenApply((rs) -> null), "Storing dead letter of", d.projection().name());
	}

	@Override
	public CompletionStage<List<DeadLetter>> list(String projectionName, int limit) {
		// Every page up to the limit, not only the driver's first page.
		List<DeadLetter> letters = new ArrayList<>();
		return Errors.translating(AsyncPaging.forEachRow(this.session.executeAsync(this.select.bind(projectionName, limit)),
				(row) -> letters.add(letter(projectionName, row))).thenApply((read) -> letters), "Listing dead letters of",
				projectionName);
	}

	private static DeadLetter letter(String projectionName, Row row) {
		PersistentEvent<String> event = new PersistentEvent<>(row.getString("persistence_id"), row.getLong("sequence_nr"),
				Instant.ofEpochMilli(row.getLong("timestamp")), row.getSet("tags", String.class), row.getString("payload"));
		return new DeadLetter(new ProjectionId(projectionName, row.getString("projection_key")), event,
				row.getString("error"), Instant.ofEpochMilli(row.getLong("failed_at")));
	}

	@Override
	public CompletionStage<Void> remove(DeadLetter d) {
		return Errors.translating(this.session.executeAsync(this.delete.bind(d.projection().name(),
				d.event().persistenceId(), d.event().sequenceNr())).thenApply((rs) -> null), "Removing dead letter of",
				d.projection().name());
	}

	/** @return the clock dead letters are stamped with */
	public Clock clock() {
		return this.clock;
	}

}
