package io.cassandrajournal.internal;

import java.util.List;

/**
 * A table the journal needs: its CQL, and the columns as {@code system_schema.columns} must show them.
 *
 * @param name the table name
 * @param createCql the {@code CREATE TABLE IF NOT EXISTS} statement, keyspace-qualified
 * @param columns every column with type, kind, position and clustering order
 */
public record TableDefinition(String name, String createCql, List<Column> columns) {

	/**
	 * A column as {@code system_schema.columns} describes it.
	 *
	 * @param name column name
	 * @param type CQL type as Cassandra prints it, such as {@code set<text>}
	 * @param kind {@code partition_key}, {@code clustering} or {@code regular}
	 * @param position position within the partition key or clustering columns, -1 for regular
	 * @param clusteringOrder {@code asc}, {@code desc} or {@code none}
	 */
	public record Column(String name, String type, String kind, int position, String clusteringOrder) {

		public static Column partitionKey(String name, String type, int position) {
			return new Column(name, type, "partition_key", position, "none");
		}

		public static Column clustering(String name, String type, int position, String order) {
			return new Column(name, type, "clustering", position, order);
		}

		public static Column regular(String name, String type) {
			return new Column(name, type, "regular", -1, "none");
		}

		String describe() {
			return this.name + " " + this.type + " (" + this.kind
					+ ("clustering".equals(this.kind) ? " " + this.clusteringOrder : "") + ")";
		}

	}

}
