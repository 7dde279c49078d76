package io.cassandrajournal.journal;

import java.util.List;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.CqlNames;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.TableDefinition.Column;
import io.cassandrajournal.internal.TableDefinition;

/**
 * How far {@code deleteTo} has deleted each persistenceId's events, so the consistency check can tell a
 * deleted range from lost events. The reference schema has no place for this (its {@code metadata} row holds
 * only the head), so it is a table of ours, {@code <metadataTable>_deleted_to}, which the TypeScript
 * implementation neither reads nor writes. Marks only grow: each deletion adds a clustering row and the check
 * reads the largest, so two concurrent deletions cannot lower it (no read-modify-write, no Paxos).
 */
final class DeletionMarks {

	private final CqlSession session;

	private final PreparedStatement insert;

	private final PreparedStatement latest;

	private final PreparedStatement prune;

	public DeletionMarks(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		JournalStatements.Statements s = new JournalStatements.Statements(session, options);
		String table = options.requireKeyspace() + "." + tableName(options);
		this.insert = s.write("INSERT INTO " + table + " (persistence_id, deleted_to) VALUES (?, ?)");
		this.latest = s.read("SELECT deleted_to FROM " + table + " WHERE persistence_id = ? LIMIT 1");
		this.prune = s.write("DELETE FROM " + table + " WHERE persistence_id = ? AND deleted_to < ?");
	}

	/**
	 * @param options the journal options
	 * @return the marks table: one partition per persistenceId that was ever deleted from, newest mark first
	 */
	public static TableDefinition table(CassandraJournalOptions options) {
		String name = tableName(options);
		return new TableDefinition(name, "CREATE TABLE IF NOT EXISTS " + options.requireKeyspace() + "." + name
				+ " (persistence_id text, deleted_to bigint, PRIMARY KEY (persistence_id, deleted_to))"
				+ " WITH CLUSTERING ORDER BY (deleted_to DESC)",
				List.of(Column.partitionKey("persistence_id", "text", 0),
						Column.clustering("deleted_to", "bigint", 0, "desc")));
	}

	private static String tableName(CassandraJournalOptions options) {
		return CqlNames.check("metadataTable + '_deleted_to' (the deletion marks table)",
				options.metadataTable() + "_deleted_to");
	}

	/**
	 * @param persistenceId the entity
	 * @return the highest sequence number up to which its events were deleted, 0 if never
	 */
	public CompletionStage<Long> deletedTo(String persistenceId) {
		return this.session.executeAsync(this.latest.bind(persistenceId)).thenApply((rs) -> {
			Row row = rs.one();
			return (row != null) ? row.getLong(0) : 0L;
		});
	}

	/**
	 * Records a completed deletion, then drops the older marks (one range tombstone, behind the newest row
	 * in clustering order, so reading the newest mark never reads it).
	 * @param persistenceId the entity
	 * @param deletedTo every event up to this sequence number is deleted
	 * @return completes when recorded
	 */
	public CompletionStage<Void> mark(String persistenceId, long deletedTo) {
		return this.session.executeAsync(this.insert.bind(persistenceId, deletedTo))
			.thenCompose((ignored) -> this.session.executeAsync(this.prune.bind(persistenceId, deletedTo)))
			.thenApply((ignored) -> null);
	}

}
