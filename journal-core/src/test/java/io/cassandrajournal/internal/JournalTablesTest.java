package io.cassandrajournal.internal;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The bucketed and the segment-aware tag index tables share one definition (the tag rows partitioned by the tag
 * and one more key): their CQL and columns are pinned as they were written out before, so the derivation changes
 * no table.
 */
class JournalTablesTest {

	@Test
	void theSlicedTableIsTheTagRowsPartitionedByTagAndSliceGroup() {
		TableDefinition sliced = JournalTables
			.tagIndexSliced(CassandraJournalOptions.create().withKeyspace("ks").withUseTagIndex(true).withTagSliceGroups(16));
		assertThat(sliced.name()).isEqualTo("events_by_tag_sliced16");
		assertThat(sliced.createCql()).isEqualTo("CREATE TABLE IF NOT EXISTS ks.events_by_tag_sliced16 (tag text, "
				+ "slice_group int, timestamp bigint, persistence_id text, sequence_nr bigint, payload text, "
				+ "tags set<text>, PRIMARY KEY ((tag, slice_group), timestamp, persistence_id, sequence_nr)) "
				+ "WITH CLUSTERING ORDER BY (timestamp ASC, persistence_id ASC, sequence_nr ASC)");
		assertThat(sliced.columns()).extracting(TableDefinition.Column::describe)
			.containsExactly("tag text (partition_key)", "slice_group int (partition_key)",
					"timestamp bigint (clustering asc)", "persistence_id text (clustering asc)",
					"sequence_nr bigint (clustering asc)", "payload text (regular)", "tags set<text> (regular)");
		assertThat(sliced.columns().get(1).position()).isEqualTo(1);
	}

	@Test
	void theBucketedTableIsTheTagRowsPartitionedByTagAndBucket() {
		CassandraJournalOptions options = CassandraJournalOptions.create()
			.withKeyspace("ks")
			.withUseTagIndex(true)
			.withTagBucketing(TagBucketing.HOUR);
		TableDefinition bucketed = JournalTables.tagIndexBucketed(options);
		assertThat(bucketed.name()).isEqualTo(options.tagIndexDataTable());
		assertThat(bucketed.createCql()).isEqualTo("CREATE TABLE IF NOT EXISTS ks." + options.tagIndexDataTable()
				+ " (tag text, bucket bigint, timestamp bigint, persistence_id text, sequence_nr bigint, payload text, "
				+ "tags set<text>, PRIMARY KEY ((tag, bucket), timestamp, persistence_id, sequence_nr)) "
				+ "WITH CLUSTERING ORDER BY (timestamp ASC, persistence_id ASC, sequence_nr ASC)");
		assertThat(bucketed.columns()).extracting(TableDefinition.Column::describe)
			.containsExactly("tag text (partition_key)", "bucket bigint (partition_key)",
					"timestamp bigint (clustering asc)", "persistence_id text (clustering asc)",
					"sequence_nr bigint (clustering asc)", "payload text (regular)", "tags set<text> (regular)");
	}

	@Test
	void withBucketsTheSlicedTableIsTheTagRowsPartitionedByTagBucketAndSliceGroup() {
		CassandraJournalOptions options = CassandraJournalOptions.create()
			.withKeyspace("ks")
			.withUseTagIndex(true)
			.withTagBucketing(TagBucketing.HOUR)
			.withTagSliceGroups(16);
		TableDefinition sliced = JournalTables.tagIndexSliced(options);
		assertThat(sliced.name()).isEqualTo("events_by_tag_hour_sliced16");
		assertThat(sliced.createCql()).isEqualTo("CREATE TABLE IF NOT EXISTS ks.events_by_tag_hour_sliced16 (tag text, "
				+ "bucket bigint, slice_group int, timestamp bigint, persistence_id text, sequence_nr bigint, "
				+ "payload text, tags set<text>, PRIMARY KEY ((tag, bucket, slice_group), timestamp, persistence_id, "
				+ "sequence_nr)) WITH CLUSTERING ORDER BY (timestamp ASC, persistence_id ASC, sequence_nr ASC)");
		assertThat(sliced.columns()).extracting(TableDefinition.Column::describe)
			.containsExactly("tag text (partition_key)", "bucket bigint (partition_key)",
					"slice_group int (partition_key)", "timestamp bigint (clustering asc)",
					"persistence_id text (clustering asc)", "sequence_nr bigint (clustering asc)",
					"payload text (regular)", "tags set<text> (regular)");
		assertThat(JournalTables.tagIndexTables(options)).extracting(TableDefinition::name)
			.containsExactly("events_by_tag_hour", "events_by_tag_hour_buckets", "events_by_tag_hour_sliced16");
	}

}
