package io.cassandrajournal.internal;

import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * How far a retention cleanup dropped each tag's buckets of the bucketed tag index (docs/reliability.md, finding
 * 19), so that a tag projection whose cursor lies before it can say "events before X were dropped". Where this
 * fits: written by {@code JournalCleanup.dropTagBuckets}, read by {@code CassandraReadJournal}.
 * <p>
 * A mark is a row of the tag's bucket list ({@code <tag-index>_<size>_buckets}) with a <b>negative</b> bucket:
 * {@code -X}, where X (epoch millis) is the end of the newest dropped bucket. Bucket starts are never negative, so
 * no walk lists a mark (walks list buckets from the cursor's bucket up), no column changes meaning for real buckets,
 * and no new table is needed; the TypeScript implementation does not read the bucketed tables. Marks only grow:
 * each drop adds a row, and the most negative one (the first in clustering order) is the latest.
 */
public final class DroppedBucketMarks {

	private final CqlSession session;

	private final PreparedStatement insert;

	private final PreparedStatement latest;

	/**
	 * @param session the session
	 * @param options options with a bucketed tag index whose bucket list exists
	 */
	public DroppedBucketMarks(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		JournalStatements.Statements s = new JournalStatements.Statements(session, options);
		String table = options.requireKeyspace() + "." + options.tagBucketsTable();
		this.insert = s.write("INSERT INTO " + table + " (tag, bucket) VALUES (?, ?)");
		this.latest = s.read("SELECT bucket FROM " + table + " WHERE tag = ? AND bucket < 0 LIMIT 1");
	}

	/**
	 * @param tag the tag
	 * @param droppedBefore the end of the newest bucket dropped: events of the tag stamped before it may be gone
	 * @return completes when recorded
	 */
	public CompletionStage<Void> mark(String tag, Instant droppedBefore) {
		return this.session.executeAsync(this.insert.bind(tag, -Math.max(1, droppedBefore.toEpochMilli())))
			.thenApply((ignored) -> null);
	}

	/**
	 * @param tag the tag
	 * @return the latest mark: events of the tag stamped before it may have been dropped; empty if none
	 */
	public CompletionStage<Optional<Instant>> droppedBefore(String tag) {
		return this.session.executeAsync(this.latest.bind(tag)).thenApply((rs) -> {
			Row row = rs.one();
			return (row == null) ? Optional.<Instant>empty() : Optional.of(Instant.ofEpochMilli(-row.getLong(0)));
		});
	}

}
