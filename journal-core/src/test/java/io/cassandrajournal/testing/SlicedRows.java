package io.cassandrajournal.testing;

import java.util.ArrayList;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.SliceHash;
import io.cassandrajournal.internal.TagSlices;
import io.cassandrajournal.query.LiveTagFeed;
import io.cassandrajournal.query.TaggedEvent;

import static io.cassandrajournal.testing.Await.result;

/**
 * Where this fits: the segment-aware tag index's tests ({@code SlicedTagIndexIT}, {@code BucketedSlicedTagIndexIT},
 * {@code SliceHashLayoutIT}) count the rows of one slice group's partitions in the sliced table, and drain feeds to
 * compare a slice range's events with the whole tag's. Counts read the table directly ({@code count(*)}), not
 * through the journal.
 *
 * @param session the session to count through
 * @param keyspace the keyspace
 * @param slicedTable the sliced copies' table ({@code <tag-index-table>_sliced<groups>}, or with bucketing
 * {@code <tag-index-table>_<unit>_sliced<groups>})
 * @param bucketsTable with bucketing, the table listing each tag's buckets ({@code <tag-index-table>_<unit>_buckets});
 * null without
 */
public record SlicedRows(CqlSession session, String keyspace, String slicedTable, @Nullable String bucketsTable) {

	/** @return the counter of an index without bucketing (partitions by tag and slice group) */
	public static SlicedRows of(CqlSession session, String keyspace, String slicedTable) {
		return new SlicedRows(session, keyspace, slicedTable, null);
	}

	/** @return the counter of a bucketed index (partitions by tag, bucket and slice group) */
	public static SlicedRows bucketed(CqlSession session, String keyspace, String slicedTable, String bucketsTable) {
		return new SlicedRows(session, keyspace, slicedTable, bucketsTable);
	}

	/** @return the rows of a tag's slice group: with bucketing, summed over the buckets the bucket list names */
	public int groupRows(String tag, int group) {
		if (this.bucketsTable == null) {
			return (int) this.session.execute(SimpleStatement.newInstance("SELECT count(*) FROM " + this.keyspace + "."
					+ this.slicedTable + " WHERE tag = ? AND slice_group = ?", tag, group)).one().getLong(0);
		}
		int rows = 0;
		for (Row bucket : this.session.execute(SimpleStatement.newInstance("SELECT bucket FROM " + this.keyspace + "."
				+ this.bucketsTable + " WHERE tag = ? AND bucket >= 0", tag))) {
			rows += partitionRows(tag, bucket.getLong(0), group);
		}
		return rows;
	}

	/** @return the rows of one partition of a bucketed index */
	public int partitionRows(String tag, long bucket, int group) {
		return (int) this.session.execute(SimpleStatement.newInstance("SELECT count(*) FROM " + this.keyspace + "."
				+ this.slicedTable + " WHERE tag = ? AND bucket = ? AND slice_group = ?", tag, bucket, group))
			.one()
			.getLong(0);
	}

	/** @return whether the id's slice by {@code hash} is in {@code from..to} */
	public static boolean inRange(SliceHash hash, String persistenceId, int from, int to) {
		int slice = TagSlices.sliceOf(hash, persistenceId);
		return slice >= from && slice <= to;
	}

	/** @return {@code persistenceId#sequenceNr} */
	public static String key(TaggedEvent<String> event) {
		return event.event().persistenceId() + "#" + event.event().sequenceNr();
	}

	/** @return every event the feed gives until it is caught up and a poll gives nothing */
	public static List<TaggedEvent<String>> drain(LiveTagFeed feed) {
		List<TaggedEvent<String>> all = new ArrayList<>();
		List<TaggedEvent<String>> batch;
		do {
			batch = result(feed.poll());
			all.addAll(batch);
		}
		while (!batch.isEmpty() || !feed.caughtUp());
		return all;
	}

}
