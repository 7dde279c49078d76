package io.cassandrajournal.internal;

import java.util.ArrayList;
import java.util.List;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.TableDefinition.Column;

/**
 * The CQL of every table, exactly as the reference implementation defines the shared ones (events,
 * metadata, all_persistence_ids, events_by_tag, snapshots), so a keyspace written by either
 * implementation is readable by the other. {@code durable_state} is ours.
 */
public final class JournalTables {

	private JournalTables() {
	}

	public static TableDefinition events(CassandraJournalOptions o) {
		String ks = o.requireKeyspace();
		return new TableDefinition(o.eventsTable(), "CREATE TABLE IF NOT EXISTS " + ks + "." + o.eventsTable() + " ("
				+ "persistence_id text, partition_nr bigint, sequence_nr bigint, timestamp bigint, payload text, "
				+ "tags set<text>, PRIMARY KEY ((persistence_id, partition_nr), sequence_nr)"
				+ ") WITH CLUSTERING ORDER BY (sequence_nr ASC)",
				List.of(Column.partitionKey("persistence_id", "text", 0), Column.partitionKey("partition_nr", "bigint", 1),
						Column.clustering("sequence_nr", "bigint", 0, "asc"), Column.regular("timestamp", "bigint"),
						Column.regular("payload", "text"), Column.regular("tags", "set<text>")));
	}

	public static TableDefinition metadata(CassandraJournalOptions o) {
		String ks = o.requireKeyspace();
		return new TableDefinition(o.metadataTable(), "CREATE TABLE IF NOT EXISTS " + ks + "." + o.metadataTable()
				+ " (persistence_id text PRIMARY KEY, max_sequence_nr bigint, updated_at bigint)",
				List.of(Column.partitionKey("persistence_id", "text", 0), Column.regular("max_sequence_nr", "bigint"),
						Column.regular("updated_at", "bigint")));
	}

	public static TableDefinition allIds(CassandraJournalOptions o) {
		String ks = o.requireKeyspace();
		return new TableDefinition(o.allIdsTable(), "CREATE TABLE IF NOT EXISTS " + ks + "." + o.allIdsTable()
				+ " (tag text, persistence_id text, PRIMARY KEY (tag, persistence_id))",
				List.of(Column.partitionKey("tag", "text", 0), Column.clustering("persistence_id", "text", 0, "asc")));
	}

	public static TableDefinition tagIndex(CassandraJournalOptions o) {
		String ks = o.requireKeyspace();
		return new TableDefinition(o.tagIndexTable(), "CREATE TABLE IF NOT EXISTS " + ks + "." + o.tagIndexTable()
				+ " (tag text, timestamp bigint, persistence_id text, sequence_nr bigint, payload text, tags set<text>, "
				+ "PRIMARY KEY ((tag), timestamp, persistence_id, sequence_nr)) "
				+ "WITH CLUSTERING ORDER BY (timestamp ASC, persistence_id ASC, sequence_nr ASC)",
				List.of(Column.partitionKey("tag", "text", 0), Column.clustering("timestamp", "bigint", 0, "asc"),
						Column.clustering("persistence_id", "text", 1, "asc"),
						Column.clustering("sequence_nr", "bigint", 2, "asc"), Column.regular("payload", "text"),
						Column.regular("tags", "set<text>")));
	}

	/**
	 * @return the tables of the configured tag index layout: {@code events_by_tag}, or the bucketed index and
	 * its bucket list; with {@code tag-slice-groups}, the segment-aware index beside them
	 */
	public static List<TableDefinition> tagIndexTables(CassandraJournalOptions o) {
		List<TableDefinition> tables = new ArrayList<>();
		if (o.tagBucketing() == TagBucketing.NONE) {
			tables.add(tagIndex(o));
		}
		else {
			tables.add(tagIndexBucketed(o));
			tables.add(tagBuckets(o));
		}
		if (o.tagSliceGroups() != 0) {
			tables.add(tagIndexSliced(o));
		}
		return List.copyOf(tables);
	}

	/**
	 * Ours: the segment-aware tag index, a second copy of each tag row in the partition of its persistenceId's
	 * slice group ({@link TagSlices#groupOf}), so a projection segment reads only its own entities' rows; with tag
	 * bucketing, in the partition of its tag, bucket and slice group (the bucket list is the bucketed index's).
	 */
	public static TableDefinition tagIndexSliced(CassandraJournalOptions o) {
		return (o.tagBucketing() == TagBucketing.NONE)
				? tagRowsPartitionedWith(o, o.tagIndexSlicedTable(), List.of("slice_group"), List.of("int"))
				: tagRowsPartitionedWith(o, o.tagIndexSlicedTable(), List.of("bucket", "slice_group"),
						List.of("bigint", "int"));
	}

	/** Our layout: one partition per tag and time bucket ({@code bucket} = the bucket's start, epoch ms). */
	public static TableDefinition tagIndexBucketed(CassandraJournalOptions o) {
		return tagRowsPartitionedWith(o, o.tagIndexDataTable(), List.of("bucket"), List.of("bigint"));
	}

	/**
	 * The tag index's rows, as in {@link #tagIndex}, in partitions of the tag and more key columns.
	 * @param table the table
	 * @param keys the partition key columns after the tag
	 * @param types their CQL types
	 */
	private static TableDefinition tagRowsPartitionedWith(CassandraJournalOptions o, String table, List<String> keys,
			List<String> types) {
		StringBuilder columns = new StringBuilder();
		List<Column> definition = new ArrayList<>(List.of(Column.partitionKey("tag", "text", 0)));
		for (int i = 0; i < keys.size(); i++) {
			columns.append(keys.get(i)).append(' ').append(types.get(i)).append(", ");
			definition.add(Column.partitionKey(keys.get(i), types.get(i), i + 1));
		}
		definition.addAll(List.of(Column.clustering("timestamp", "bigint", 0, "asc"),
				Column.clustering("persistence_id", "text", 1, "asc"),
				Column.clustering("sequence_nr", "bigint", 2, "asc"), Column.regular("payload", "text"),
				Column.regular("tags", "set<text>")));
		return new TableDefinition(table, "CREATE TABLE IF NOT EXISTS " + o.requireKeyspace() + "." + table
				+ " (tag text, " + columns + "timestamp bigint, persistence_id text, sequence_nr bigint, "
				+ "payload text, tags set<text>, PRIMARY KEY ((tag, " + String.join(", ", keys)
				+ "), timestamp, persistence_id, sequence_nr)) "
				+ "WITH CLUSTERING ORDER BY (timestamp ASC, persistence_id ASC, sequence_nr ASC)",
				List.copyOf(definition));
	}

	/** The non-empty buckets of each tag, so that a walk skips empty ones. */
	public static TableDefinition tagBuckets(CassandraJournalOptions o) {
		String ks = o.requireKeyspace();
		String table = o.tagBucketsTable();
		return new TableDefinition(table, "CREATE TABLE IF NOT EXISTS " + ks + "." + table
				+ " (tag text, bucket bigint, PRIMARY KEY (tag, bucket)) WITH CLUSTERING ORDER BY (bucket ASC)",
				List.of(Column.partitionKey("tag", "text", 0), Column.clustering("bucket", "bigint", 0, "asc")));
	}

	public static TableDefinition snapshots(CassandraJournalOptions o) {
		String ks = o.requireKeyspace();
		return new TableDefinition(o.snapshotsTable(), "CREATE TABLE IF NOT EXISTS " + ks + "." + o.snapshotsTable()
				+ " (persistence_id text, sequence_nr bigint, timestamp bigint, payload text, "
				+ "PRIMARY KEY (persistence_id, sequence_nr)) WITH CLUSTERING ORDER BY (sequence_nr DESC)",
				List.of(Column.partitionKey("persistence_id", "text", 0),
						Column.clustering("sequence_nr", "bigint", 0, "desc"), Column.regular("timestamp", "bigint"),
						Column.regular("payload", "text")));
	}

	public static TableDefinition durableState(CassandraJournalOptions o) {
		String ks = o.requireKeyspace();
		return new TableDefinition(o.durableStateTable(), "CREATE TABLE IF NOT EXISTS " + ks + "."
				+ o.durableStateTable() + " (persistence_id text PRIMARY KEY, revision bigint, payload text, "
				+ "updated_at bigint)",
				List.of(Column.partitionKey("persistence_id", "text", 0), Column.regular("revision", "bigint"),
						Column.regular("payload", "text"), Column.regular("updated_at", "bigint")));
	}

}
