package io.cassandrajournal.internal;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalSchemaException;
import io.cassandrajournal.internal.TableDefinition.Column;

/**
 * Makes sure the keyspace exists (never creates it), creates missing tables when {@code autoCreateTables}
 * is on, and checks every table's columns, keys and clustering order against {@code system_schema}: a
 * table created by hand or by another version with a different shape fails start-up with a message that
 * says what differs.
 */
public final class SchemaManager {

	private SchemaManager() {
	}

	public static void ensure(CqlSession session, CassandraJournalOptions options, List<TableDefinition> tables) {
		String keyspace = options.requireKeyspace();
		checkKeyspace(session, keyspace);
		for (TableDefinition table : tables) {
			Map<String, Column> actual = columns(session, keyspace, table.name());
			if (actual.isEmpty()) {
				if (!options.autoCreateTables()) {
					throw missingTable(keyspace, table);
				}
				// Not idempotent on purpose: the driver would re-send it to another node after a lost connection,
				// and two nodes creating one table before their schemas agree give it two table ids. The schema
				// reads around it are idempotent, so a node lost during start-up is retried there (finding 24).
				session.execute(SimpleStatement.newInstance(table.createCql()).setTimeout(java.time.Duration.ofMinutes(1)));
				actual = columns(session, keyspace, table.name());
			}
			verify(keyspace, table, actual);
		}
	}

	/**
	 * @param keyspace the keyspace
	 * @param table the missing table
	 * @return the refusal of a start that needs {@code table} while {@code autoCreateTables} is off, with its CQL
	 */
	public static JournalSchemaException missingTable(String keyspace, TableDefinition table) {
		return new JournalSchemaException("Table " + keyspace + "." + table.name() + " does not exist and "
				+ "autoCreateTables is off. Create it with:\n  " + table.createCql()
				+ "\nor turn autoCreateTables on (journal.cassandra.auto-create-tables=true).");
	}

	static void checkKeyspace(CqlSession session, String keyspace) {
		Row row = session.execute(SimpleStatement
			.newInstance("SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?", keyspace)
			.setIdempotent(true)).one();
		if (row == null) {
			throw new JournalSchemaException("Keyspace '" + keyspace + "' does not exist. The journal creates tables, "
					+ "never the keyspace: create it first, for example\n  CREATE KEYSPACE " + keyspace
					+ " WITH replication = {'class': 'NetworkTopologyStrategy', '<datacenter>': 3};\n"
					+ "or point journal.cassandra.keyspace at an existing one.");
		}
	}

	private static Map<String, Column> columns(CqlSession session, String keyspace, String table) {
		Map<String, Column> columns = new HashMap<>();
		for (Row row : session.execute(SimpleStatement.newInstance(
				"SELECT column_name, type, kind, position, clustering_order FROM system_schema.columns "
						+ "WHERE keyspace_name = ? AND table_name = ?",
				keyspace, table).setIdempotent(true))) {
			String name = row.getString("column_name");
			columns.put(name, new Column(name, row.getString("type"), row.getString("kind"), row.getInt("position"),
					row.getString("clustering_order")));
		}
		return columns;
	}

	private static void verify(String keyspace, TableDefinition table, Map<String, Column> actual) {
		StringBuilder problems = new StringBuilder();
		for (Column expected : table.columns()) {
			Column found = actual.get(expected.name());
			if (found == null) {
				problems.append("\n  missing column ").append(expected.describe());
			}
			else if (!found.equals(expected)) {
				problems.append("\n  column ").append(found.describe()).append(" should be ").append(expected.describe());
			}
		}
		if (!problems.isEmpty()) {
			throw new JournalSchemaException("Table " + keyspace + "." + table.name()
					+ " does not have the journal's schema:" + problems + "\nExpected:\n  " + table.createCql());
		}
	}

}
