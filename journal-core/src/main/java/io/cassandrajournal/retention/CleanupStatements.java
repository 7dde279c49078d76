package io.cassandrajournal.retention;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.CqlNames;
import io.cassandrajournal.internal.JournalStatements;

/**
 * Where this fits: every statement of {@link JournalCleanup}, prepared once. Statements of tables that do not
 * exist in the keyspace (no snapshot store, no durable state, no bucketed tag index) are {@code null}.
 */
final class CleanupStatements {

	final PreparedStatement deleteHeadIf;

	final PreparedStatement latestMark;

	final PreparedStatement deleteMarksUpTo;

	final PreparedStatement deleteIdRow;

	final PreparedStatement insertIdRow;

	final @Nullable PreparedStatement snapshotSequenceNrs;

	final @Nullable PreparedStatement deleteSnapshotsUpTo;

	final @Nullable PreparedStatement deleteSnapshotsBelow;

	final @Nullable PreparedStatement deleteDurableState;

	final @Nullable PreparedStatement tagsWithBuckets;

	final @Nullable PreparedStatement bucketsBefore;

	final @Nullable PreparedStatement deleteBucketData;

	final @Nullable PreparedStatement deleteBucketListed;

	/** The sliced copies of a bucket: its partitions of every slice group ({@code tag-slice-groups}), or null. */
	final @Nullable PreparedStatement deleteBucketSliced;

	CleanupStatements(CqlSession session, CassandraJournalOptions o) {
		JournalStatements.Statements s = new JournalStatements.Statements(session, o);
		String ks = o.requireKeyspace();
		this.deleteHeadIf = s.conditional("DELETE FROM " + ks + "." + o.metadataTable()
				+ " WHERE persistence_id = ? IF max_sequence_nr = ?");
		// The journal's deletion marks (journal.DeletionMarks): same name rule.
		String marks = ks + "." + CqlNames.check("metadataTable + '_deleted_to'", o.metadataTable() + "_deleted_to");
		this.latestMark = s.read("SELECT deleted_to FROM " + marks + " WHERE persistence_id = ? LIMIT 1");
		this.deleteMarksUpTo = s.write("DELETE FROM " + marks + " WHERE persistence_id = ? AND deleted_to <= ?");
		String ids = ks + "." + o.allIdsTable();
		this.deleteIdRow = s.write("DELETE FROM " + ids + " WHERE tag = ? AND persistence_id = ?");
		this.insertIdRow = s.write("INSERT INTO " + ids + " (tag, persistence_id) VALUES (?, ?)");
		if (exists(session, ks, o.snapshotsTable())) {
			String snapshots = ks + "." + o.snapshotsTable();
			this.snapshotSequenceNrs = s.read("SELECT sequence_nr FROM " + snapshots + " WHERE persistence_id = ?");
			this.deleteSnapshotsUpTo = s
				.write("DELETE FROM " + snapshots + " WHERE persistence_id = ? AND sequence_nr <= ?");
			this.deleteSnapshotsBelow = s
				.write("DELETE FROM " + snapshots + " WHERE persistence_id = ? AND sequence_nr < ?");
		}
		else {
			this.snapshotSequenceNrs = null;
			this.deleteSnapshotsUpTo = null;
			this.deleteSnapshotsBelow = null;
		}
		this.deleteDurableState = exists(session, ks, o.durableStateTable())
				? s.write("DELETE FROM " + ks + "." + o.durableStateTable() + " WHERE persistence_id = ?") : null;
		if (o.useTagIndex() && o.tagBucketing() != TagBucketing.NONE && exists(session, ks, o.tagBucketsTable())) {
			String data = ks + "." + o.tagIndexDataTable();
			String buckets = ks + "." + o.tagBucketsTable();
			this.tagsWithBuckets = s.read("SELECT DISTINCT tag FROM " + buckets);
			// From 0: negative buckets are drop marks (internal.DroppedBucketMarks), not buckets.
			this.bucketsBefore = s.read("SELECT bucket FROM " + buckets + " WHERE tag = ? AND bucket >= 0 AND bucket < ?");
			this.deleteBucketData = s.write("DELETE FROM " + data + " WHERE tag = ? AND bucket = ?");
			this.deleteBucketListed = s.write("DELETE FROM " + buckets + " WHERE tag = ? AND bucket = ?");
			this.deleteBucketSliced = (o.tagSliceGroups() != 0 && exists(session, ks, o.tagIndexSlicedTable()))
					? s.write("DELETE FROM " + ks + "." + o.tagIndexSlicedTable()
							+ " WHERE tag = ? AND bucket = ? AND slice_group IN ?")
					: null;
		}
		else {
			this.tagsWithBuckets = null;
			this.bucketsBefore = null;
			this.deleteBucketData = null;
			this.deleteBucketListed = null;
			this.deleteBucketSliced = null;
		}
	}

	private static boolean exists(CqlSession session, String keyspace, String table) {
		return session.execute(SimpleStatement.newInstance(
				"SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?", keyspace, table))
			.one() != null;
	}

}
