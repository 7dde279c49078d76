package io.cassandrajournal.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.query.TagOffset;

/**
 * The physical layout of the tag index: how its rows are written and how one tag's rows are read in offset
 * order. {@link #create} picks the reference layout (one partition per tag) or the bucketed one (one
 * partition per tag and time bucket, plus a list of each tag's non-empty buckets), with, when
 * {@link CassandraJournalOptions#tagSliceGroups()} is set, the segment-aware index beside it ({@link Sliced}).
 */
public abstract class TagPartitions {

	/** Rows read per tag: timestamp, persistence_id, sequence_nr, payload, tags. */
	static final String COLUMNS = "timestamp, persistence_id, sequence_nr, payload, tags";

	final CqlSession session;

	final CassandraJournalOptions options;

	final JournalStatements.Statements statements;

	/** Seconds a row lives ({@link CassandraJournalOptions#tagIndexTtl()}), 0: for ever. */
	final int ttl;

	TagPartitions(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		this.options = options;
		this.statements = new JournalStatements.Statements(session, options);
		this.ttl = (int) options.tagIndexTtl().getSeconds();
	}

	/**
	 * @param session the session
	 * @param options the options (their {@link TagBucketing} picks the layout)
	 * @return the layout; its tables must exist
	 */
	public static TagPartitions create(CqlSession session, CassandraJournalOptions options) {
		TagPartitions layout = (options.tagBucketing() == TagBucketing.NONE) ? new Single(session, options)
				: new Bucketed(session, options);
		return (options.tagSliceGroups() == 0) ? layout : new Sliced(session, options, layout);
	}

	/**
	 * @return how many rows the layout writes per tag row: 2 with the segment-aware index (the reference row and
	 * its sliced copy), else 1
	 */
	public int copies() {
		return 1;
	}

	/**
	 * One slice group's rows of a tag in the segment-aware index (see {@link TagSlices}).
	 * @param tag the tag
	 * @param group the slice group
	 * @param after the offset to read after
	 * @param upperTimestamp the newest time stamp to read
	 * @param limit rows at most
	 * @return the group's rows after {@code after}, in offset order; fewer than {@code limit} only when no more
	 * rows up to {@code upperTimestamp} exist
	 * @throws IllegalStateException without the segment-aware index
	 */
	public CompletionStage<List<Row>> groupRows(String tag, int group, TagOffset after, long upperTimestamp,
			int limit) {
		throw new IllegalStateException("The segment-aware tag index is off (tag-slice-groups = 0)");
	}

	/**
	 * One tag index row: an event under one of its tags.
	 *
	 * @param tag the tag
	 * @param timestamp the event's time stamp
	 * @param persistenceId the entity
	 * @param sequenceNr the event's sequence number
	 * @param payload the serialized payload
	 * @param tags all tags of the event
	 */
	public record TagRow(String tag, long timestamp, String persistenceId, long sequenceNr, String payload,
			Set<String> tags) {
	}

	/**
	 * Writes rows: one unlogged batch per partition (upserts, so writing a row twice is harmless).
	 * @param rows the rows
	 * @param writeTime the rows' write time stamp (microseconds), or {@link Statement#NO_DEFAULT_TIMESTAMP} for
	 * the driver's
	 * @return completes when every row is written
	 */
	public abstract CompletionStage<Void> write(List<TagRow> rows, long writeTime);

	/**
	 * The inserts of rows, for a batch of the caller's (an append puts them in one logged batch with its events
	 * rows). Anything a reader needs before it can find a row (the bucketed layout's bucket list) is written
	 * first: the stage completes after it.
	 * @param rows the rows
	 * @return one insert per row, once they may be written
	 */
	public abstract CompletionStage<List<BoundStatement>> inserts(List<TagRow> rows);

	/**
	 * @param tag the tag
	 * @param after the offset to read after
	 * @param upperTimestamp the newest time stamp to read
	 * @param limit rows at most
	 * @return the tag's rows after {@code after}, in offset order; fewer than {@code limit} only when no more
	 * rows up to {@code upperTimestamp} exist
	 */
	public abstract CompletionStage<List<Row>> rows(String tag, TagOffset after, long upperTimestamp, int limit);

	/**
	 * Visits every row of one tag after an offset, in offset order, as one streamed read per partition that
	 * follows the driver's paging state (not a fresh query per page), the next page read while the current
	 * one is delivered (see {@link AsyncPaging}): for walking a tag to its end in one go.
	 * @param tag the tag
	 * @param after the offset to read after
	 * @param upperTimestamp the newest time stamp to read
	 * @param action called once per row ({@link #COLUMNS}, in that order)
	 * @return completes after the last row
	 */
	public abstract CompletionStage<Void> forEachRow(String tag, TagOffset after, long upperTimestamp,
			java.util.function.Consumer<Row> action);

	CompletionStage<Void> executeBatches(Map<?, BatchStatementBuilder> batches, long writeTime) {
		List<CompletableFuture<?>> writes = new ArrayList<>(batches.size());
		for (BatchStatementBuilder batch : batches.values()) {
			writes.add(this.session.executeAsync(batch.setIdempotence(true)
				.setConsistencyLevel(this.options.consistency())
				.setTimeout(this.options.requestTimeout())
				.setQueryTimestamp(writeTime)
				.build()).toCompletableFuture());
		}
		return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new));
	}

	/**
	 * Adds every row of a bounded read to a list: all its pages, not only the driver's first one, so a
	 * {@code LIMIT} larger than the statements' page size still yields {@code LIMIT} rows when they exist
	 * (callers read "fewer than the limit" as "no more rows").
	 */
	static CompletionStage<List<Row>> collect(CompletionStage<AsyncResultSet> read, List<Row> into) {
		return AsyncPaging.forEachRow(read, into::add).thenApply((ignored) -> into);
	}

	/** The reference layout: {@code events_by_tag}, partition key {@code tag}. */
	static final class Single extends TagPartitions {

		private final PreparedStatement insert;

		private final PreparedStatement page;

		Single(CqlSession session, CassandraJournalOptions options) {
			super(session, options);
			String table = options.requireKeyspace() + "." + options.tagIndexTable();
			this.insert = this.statements.write("INSERT INTO " + table
					+ " (tag, timestamp, persistence_id, sequence_nr, payload, tags) VALUES (?, ?, ?, ?, ?, ?) USING TTL ?");
			this.page = this.statements.read("SELECT " + COLUMNS + " FROM " + table
					+ " WHERE tag = ? AND (timestamp, persistence_id, sequence_nr) > (?, ?, ?) AND (timestamp) <= (?) LIMIT ?");
		}

		@Override
		public CompletionStage<Void> write(List<TagRow> rows, long writeTime) {
			Map<String, BatchStatementBuilder> byTag = new LinkedHashMap<>();
			for (TagRow row : rows) {
				byTag.computeIfAbsent(row.tag(), (t) -> BatchStatement.builder(BatchType.UNLOGGED))
					.addStatement(this.insert.bind(row.tag(), row.timestamp(), row.persistenceId(), row.sequenceNr(),
							row.payload(), row.tags(), this.ttl));
			}
			return executeBatches(byTag, writeTime);
		}

		@Override
		public CompletionStage<List<BoundStatement>> inserts(List<TagRow> rows) {
			List<BoundStatement> inserts = new ArrayList<>(rows.size());
			for (TagRow row : rows) {
				inserts.add(this.insert.bind(row.tag(), row.timestamp(), row.persistenceId(), row.sequenceNr(),
						row.payload(), row.tags(), this.ttl));
			}
			return CompletableFuture.completedFuture(inserts);
		}

		@Override
		public CompletionStage<List<Row>> rows(String tag, TagOffset after, long upperTimestamp, int limit) {
			return collect(this.session.executeAsync(this.page.bind(tag, after.timestamp(), after.persistenceId(),
					after.sequenceNr(), upperTimestamp, limit)), new ArrayList<>(Math.min(limit, 1024)));
		}

		@Override
		public CompletionStage<Void> forEachRow(String tag, TagOffset after, long upperTimestamp,
				java.util.function.Consumer<Row> action) {
			// No LIMIT: the driver pages through the range with its paging state.
			return AsyncPaging.forEachRow(this.session.executeAsync(this.page.bind(tag, after.timestamp(),
					after.persistenceId(), after.sequenceNr(), upperTimestamp, Integer.MAX_VALUE)), action);
		}

	}

	/**
	 * Our layout: partition key {@code (tag, bucket)}, and a bucket list per tag. A writer records a bucket
	 * in the list before it writes the bucket's first row (once per tag and bucket in this process), so a
	 * reader that sees a row also finds its bucket. A read lists the tag's buckets from the one holding the
	 * offset up to the one holding the upper bound and reads them in order until the page is full.
	 */
	static final class Bucketed extends TagPartitions {

		/** Buckets listed per read of the bucket list. */
		private static final int BUCKETS_PER_READ = 64;

		private final TagBucketing bucketing;

		private final PreparedStatement insert;

		private final PreparedStatement insertBucket;

		private final PreparedStatement buckets;

		private final PreparedStatement page;

		/** Seconds a bucket-list row lives: one bucket longer than the bucket's last row; 0: for ever. */
		private final int bucketTtl;

		/** Buckets this process has recorded: (tag, bucket) pairs. */
		private final Set<Map.Entry<String, Long>> recorded = ConcurrentHashMap.newKeySet();

		Bucketed(CqlSession session, CassandraJournalOptions options) {
			super(session, options);
			this.bucketing = options.tagBucketing();
			this.bucketTtl = (this.ttl == 0) ? 0
					: (int) Math.min(630_720_000L, this.ttl + this.bucketing.size().getSeconds());
			String table = options.requireKeyspace() + "." + options.tagIndexDataTable();
			String bucketsTable = options.requireKeyspace() + "." + options.tagBucketsTable();
			this.insert = this.statements.write("INSERT INTO " + table
					+ " (tag, bucket, timestamp, persistence_id, sequence_nr, payload, tags) VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ?");
			this.insertBucket = this.statements
				.write("INSERT INTO " + bucketsTable + " (tag, bucket) VALUES (?, ?) USING TTL ?");
			this.buckets = this.statements.read("SELECT bucket FROM " + bucketsTable
					+ " WHERE tag = ? AND bucket >= ? AND bucket <= ? LIMIT " + BUCKETS_PER_READ);
			this.page = this.statements.read("SELECT " + COLUMNS + " FROM " + table + " WHERE tag = ? AND bucket = ? "
					+ "AND (timestamp, persistence_id, sequence_nr) > (?, ?, ?) AND (timestamp) <= (?) LIMIT ?");
		}

		@Override
		public CompletionStage<Void> write(List<TagRow> rows, long writeTime) {
			Map<Map.Entry<String, Long>, BatchStatementBuilder> byPartition = new LinkedHashMap<>();
			for (TagRow row : rows) {
				long bucket = this.bucketing.bucketOf(row.timestamp());
				byPartition.computeIfAbsent(Map.entry(row.tag(), bucket), (k) -> BatchStatement.builder(BatchType.UNLOGGED))
					.addStatement(this.insert.bind(row.tag(), bucket, row.timestamp(), row.persistenceId(),
							row.sequenceNr(), row.payload(), row.tags(), this.ttl));
			}
			List<CompletableFuture<?>> marks = new ArrayList<>();
			for (Map.Entry<String, Long> partition : byPartition.keySet()) {
				if (!this.recorded.contains(partition)) {
					BoundStatement mark = this.insertBucket.bind(partition.getKey(), partition.getValue(), this.bucketTtl);
					marks.add(this.session.executeAsync(mark).toCompletableFuture().thenRun(() -> remember(partition)));
				}
			}
			if (marks.isEmpty()) {
				return executeBatches(byPartition, writeTime);
			}
			return CompletableFuture.allOf(marks.toArray(CompletableFuture[]::new))
				.thenCompose((ignored) -> executeBatches(byPartition, writeTime));
		}

		@Override
		public CompletionStage<List<BoundStatement>> inserts(List<TagRow> rows) {
			List<BoundStatement> inserts = new ArrayList<>(rows.size());
			Set<Map.Entry<String, Long>> partitions = new LinkedHashSet<>();
			for (TagRow row : rows) {
				long bucket = this.bucketing.bucketOf(row.timestamp());
				partitions.add(Map.entry(row.tag(), bucket));
				inserts.add(this.insert.bind(row.tag(), bucket, row.timestamp(), row.persistenceId(), row.sequenceNr(),
						row.payload(), row.tags(), this.ttl));
			}
			List<CompletableFuture<?>> marks = new ArrayList<>();
			for (Map.Entry<String, Long> partition : partitions) {
				if (!this.recorded.contains(partition)) {
					// Listed before any row of the bucket can exist, as in write().
					BoundStatement mark = this.insertBucket.bind(partition.getKey(), partition.getValue(), this.bucketTtl);
					marks.add(this.session.executeAsync(mark).toCompletableFuture().thenRun(() -> remember(partition)));
				}
			}
			return CompletableFuture.allOf(marks.toArray(CompletableFuture[]::new)).thenApply((ignored) -> inserts);
		}

		private void remember(Map.Entry<String, Long> partition) {
			if (this.recorded.size() > 10_000) {
				this.recorded.clear();
			}
			this.recorded.add(partition);
		}

		@Override
		public CompletionStage<List<Row>> rows(String tag, TagOffset after, long upperTimestamp, int limit) {
			List<Row> into = new ArrayList<>(Math.min(limit, 1024));
			return walk(tag, after, this.bucketing.bucketOf(after.timestamp()), this.bucketing.bucketOf(upperTimestamp),
					upperTimestamp, limit, into).thenApply((ignored) -> into);
		}

		@Override
		public CompletionStage<Void> forEachRow(String tag, TagOffset after, long upperTimestamp,
				java.util.function.Consumer<Row> action) {
			return stream(tag, after, this.bucketing.bucketOf(after.timestamp()), this.bucketing.bucketOf(upperTimestamp),
					upperTimestamp, action);
		}

		/**
		 * Lists up to {@link #BUCKETS_PER_READ} buckets, streams them one after the other (the next bucket's read
		 * starts when the previous one's last page arrives), then lists the next ones.
		 */
		private CompletionStage<Void> stream(String tag, TagOffset after, long fromBucket, long toBucket, long upper,
				java.util.function.Consumer<Row> action) {
			if (fromBucket > toBucket) {
				return CompletableFuture.completedFuture(null);
			}
			List<Long> listed = new ArrayList<>(BUCKETS_PER_READ);
			return AsyncPaging.forEachRow(this.session.executeAsync(this.buckets.bind(tag, fromBucket, toBucket)),
					(row) -> listed.add(row.getLong(0)))
				.thenCompose((ignored) -> AsyncPaging.forEachRow(listed.stream()
					.<java.util.function.Supplier<CompletionStage<AsyncResultSet>>>map((bucket) -> () -> this.session
						.executeAsync(this.page.bind(tag, bucket, after.timestamp(), after.persistenceId(),
								after.sequenceNr(), upper, Integer.MAX_VALUE)))
					.iterator(), action))
				.thenCompose((ignored) -> (listed.size() < BUCKETS_PER_READ) ? CompletableFuture.<Void>completedFuture(null)
						: stream(tag, after, listed.get(listed.size() - 1) + 1, toBucket, upper, action));
		}

		private CompletionStage<Void> walk(String tag, TagOffset after, long fromBucket, long toBucket, long upper,
				int limit, List<Row> into) {
			if (fromBucket > toBucket) {
				return CompletableFuture.completedFuture(null);
			}
			List<Long> listed = new ArrayList<>(BUCKETS_PER_READ);
			return AsyncPaging.forEachRow(this.session.executeAsync(this.buckets.bind(tag, fromBucket, toBucket)),
					(row) -> listed.add(row.getLong("bucket")))
				.thenCompose((read) -> readBuckets(tag, after, listed, 0, upper, limit, into))
				.thenCompose((read) -> {
					if (listed.size() < BUCKETS_PER_READ || into.size() >= limit) {
						return CompletableFuture.<Void>completedFuture(null);
					}
					return walk(tag, after, listed.get(listed.size() - 1) + 1, toBucket, upper, limit, into);
				});
		}

		private CompletionStage<Void> readBuckets(String tag, TagOffset after, List<Long> listed, int index, long upper,
				int limit, List<Row> into) {
			if (index == listed.size() || into.size() >= limit) {
				return CompletableFuture.completedFuture(null);
			}
			return collect(this.session.executeAsync(this.page.bind(tag, listed.get(index), after.timestamp(),
					after.persistenceId(), after.sequenceNr(), upper, limit - into.size())), into)
				.thenCompose((read) -> readBuckets(tag, after, listed, index + 1, upper, limit, into));
		}

	}


	/**
	 * The segment-aware index beside another layout: every row is written to that layout and again to
	 * {@code <tagIndexTable>_sliced<groups>}, partition {@code (tag, slice_group)}; whole-tag reads go to the
	 * other layout, a segment's reads to its groups ({@link #groupRows}).
	 */
	static final class Sliced extends TagPartitions {

		private final TagPartitions whole;

		private final int groups;

		private final SliceHash hash;

		private final PreparedStatement insert;

		private final PreparedStatement page;

		Sliced(CqlSession session, CassandraJournalOptions options, TagPartitions whole) {
			super(session, options);
			this.whole = whole;
			this.groups = options.tagSliceGroups();
			this.hash = options.sliceHash();
			String table = options.requireKeyspace() + "." + options.tagIndexSlicedTable();
			this.insert = this.statements.write("INSERT INTO " + table
					+ " (tag, slice_group, timestamp, persistence_id, sequence_nr, payload, tags) VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ?");
			this.page = this.statements.read("SELECT " + COLUMNS + " FROM " + table + " WHERE tag = ? AND slice_group = ? "
					+ "AND (timestamp, persistence_id, sequence_nr) > (?, ?, ?) AND (timestamp) <= (?) LIMIT ?");
		}

		@Override
		public int copies() {
			return this.whole.copies() + 1;
		}

		private BoundStatement insertOf(TagRow row) {
			return this.insert.bind(row.tag(), TagSlices.groupOf(this.hash, row.persistenceId(), this.groups),
					row.timestamp(), row.persistenceId(), row.sequenceNr(), row.payload(), row.tags(), this.ttl);
		}

		@Override
		public CompletionStage<Void> write(List<TagRow> rows, long writeTime) {
			Map<Map.Entry<String, Integer>, BatchStatementBuilder> byPartition = new LinkedHashMap<>();
			for (TagRow row : rows) {
				byPartition
					.computeIfAbsent(
							Map.entry(row.tag(), TagSlices.groupOf(this.hash, row.persistenceId(), this.groups)),
							(k) -> BatchStatement.builder(BatchType.UNLOGGED))
					.addStatement(insertOf(row));
			}
			return CompletableFuture.allOf(this.whole.write(rows, writeTime).toCompletableFuture(),
					executeBatches(byPartition, writeTime).toCompletableFuture());
		}

		@Override
		public CompletionStage<List<BoundStatement>> inserts(List<TagRow> rows) {
			return this.whole.inserts(rows).thenApply((wholeInserts) -> {
				List<BoundStatement> inserts = new ArrayList<>(wholeInserts.size() + rows.size());
				inserts.addAll(wholeInserts);
				for (TagRow row : rows) {
					inserts.add(insertOf(row));
				}
				return inserts;
			});
		}

		@Override
		public CompletionStage<List<Row>> rows(String tag, TagOffset after, long upperTimestamp, int limit) {
			return this.whole.rows(tag, after, upperTimestamp, limit);
		}

		@Override
		public CompletionStage<Void> forEachRow(String tag, TagOffset after, long upperTimestamp,
				java.util.function.Consumer<Row> action) {
			return this.whole.forEachRow(tag, after, upperTimestamp, action);
		}

		@Override
		public CompletionStage<List<Row>> groupRows(String tag, int group, TagOffset after, long upperTimestamp,
				int limit) {
			return collect(this.session.executeAsync(this.page.bind(tag, group, after.timestamp(), after.persistenceId(),
					after.sequenceNr(), upperTimestamp, limit)), new ArrayList<>(Math.min(limit, 1024)));
		}

	}

}
