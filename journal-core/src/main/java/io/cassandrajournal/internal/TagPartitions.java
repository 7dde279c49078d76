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
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.query.TagOffset;

/**
 * The physical layout of the tag index: how its rows are written and how one tag's rows are read in offset
 * order. {@link #create} picks the reference layout (one partition per tag) or the bucketed one (one
 * partition per tag and time bucket, plus a list of each tag's non-empty buckets), with, when
 * {@link CassandraJournalOptions#tagSliceGroups()} is set, the segment-aware index beside it ({@link Sliced}),
 * bucketed like it.
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
	 * Records what a reader needs before it can find the rows (the bucketed layout's bucket list; nothing for the
	 * others), so that rows written after it completes are found.
	 * @param rows the rows about to be written
	 * @return completes once they may be written
	 */
	CompletionStage<Void> listBuckets(List<TagRow> rows) {
		return CompletableFuture.completedFuture(null);
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
			return listBuckets(rows).thenCompose((ignored) -> executeBatches(byPartition, writeTime));
		}

		@Override
		public CompletionStage<List<BoundStatement>> inserts(List<TagRow> rows) {
			List<BoundStatement> inserts = new ArrayList<>(rows.size());
			for (TagRow row : rows) {
				long bucket = this.bucketing.bucketOf(row.timestamp());
				inserts.add(this.insert.bind(row.tag(), bucket, row.timestamp(), row.persistenceId(), row.sequenceNr(),
						row.payload(), row.tags(), this.ttl));
			}
			// Listed before any row of the bucket can exist, as in write().
			return listBuckets(rows).thenApply((ignored) -> inserts);
		}

		/** Lists each (tag, bucket) of the rows not yet listed by this process; completes when all are. */
		@Override
		CompletionStage<Void> listBuckets(List<TagRow> rows) {
			Set<Map.Entry<String, Long>> partitions = new LinkedHashSet<>();
			for (TagRow row : rows) {
				partitions.add(Map.entry(row.tag(), this.bucketing.bucketOf(row.timestamp())));
			}
			List<CompletableFuture<?>> marks = new ArrayList<>();
			for (Map.Entry<String, Long> partition : partitions) {
				if (!this.recorded.contains(partition)) {
					BoundStatement mark = this.insertBucket.bind(partition.getKey(), partition.getValue(), this.bucketTtl);
					marks.add(this.session.executeAsync(mark).toCompletableFuture().thenRun(() -> remember(partition)));
				}
			}
			return marks.isEmpty() ? CompletableFuture.completedFuture(null)
					: CompletableFuture.allOf(marks.toArray(CompletableFuture[]::new));
		}

		private void remember(Map.Entry<String, Long> partition) {
			if (this.recorded.size() > 10_000) {
				this.recorded.clear();
			}
			this.recorded.add(partition);
		}

		@Override
		public CompletionStage<List<Row>> rows(String tag, TagOffset after, long upperTimestamp, int limit) {
			return rows(tag, after, upperTimestamp, limit, (bucket, max) -> this.session.executeAsync(this.page.bind(tag,
					bucket, after.timestamp(), after.persistenceId(), after.sequenceNr(), upperTimestamp, max)));
		}

		/**
		 * Walks the tag's listed buckets from the offset's to the upper bound's, reading each with {@code read}
		 * until {@code limit} rows are in.
		 * @param read one bounded read of one bucket's partition (of this table or of the sliced copy's)
		 */
		CompletionStage<List<Row>> rows(String tag, TagOffset after, long upperTimestamp, int limit, BucketRead read) {
			List<Row> into = new ArrayList<>(Math.min(limit, 1024));
			return walk(tag, this.bucketing.bucketOf(after.timestamp()), this.bucketing.bucketOf(upperTimestamp), limit,
					read, into).thenApply((ignored) -> into);
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

		private CompletionStage<Void> walk(String tag, long fromBucket, long toBucket, int limit, BucketRead read,
				List<Row> into) {
			if (fromBucket > toBucket) {
				return CompletableFuture.completedFuture(null);
			}
			List<Long> listed = new ArrayList<>(BUCKETS_PER_READ);
			return AsyncPaging.forEachRow(this.session.executeAsync(this.buckets.bind(tag, fromBucket, toBucket)),
					(row) -> listed.add(row.getLong("bucket")))
				.thenCompose((ignored) -> readBuckets(listed, 0, limit, read, into))
				.thenCompose((ignored) -> {
					if (listed.size() < BUCKETS_PER_READ || into.size() >= limit) {
						return CompletableFuture.<Void>completedFuture(null);
					}
					return walk(tag, listed.get(listed.size() - 1) + 1, toBucket, limit, read, into);
				});
		}

		private CompletionStage<Void> readBuckets(List<Long> listed, int index, int limit, BucketRead read,
				List<Row> into) {
			if (index == listed.size() || into.size() >= limit) {
				return CompletableFuture.completedFuture(null);
			}
			return collect(read.read(listed.get(index), limit - into.size()), into)
				.thenCompose((ignored) -> readBuckets(listed, index + 1, limit, read, into));
		}

		/** One bounded read of a bucket's partition. */
		@FunctionalInterface
		interface BucketRead {

			/**
			 * @param bucket the bucket
			 * @param limit rows at most
			 * @return the read
			 */
			CompletionStage<AsyncResultSet> read(long bucket, int limit);

		}

	}


	/**
	 * The segment-aware index beside another layout: every row is written to that layout and again to
	 * {@code <tagIndexTable>_sliced<groups>}, partition {@code (tag, slice_group)}, or with the bucketed layout to
	 * {@code <tagIndexTable>_<unit>_sliced<groups>}, partition {@code (tag, bucket, slice_group)}; whole-tag reads go
	 * to the other layout, a segment's reads to its groups ({@link #groupRows}): with buckets, it walks the bucketed
	 * layout's bucket list (which lists a bucket before any of its rows, in either table, is written) and reads its
	 * group's partition of each bucket.
	 */
	static final class Sliced extends TagPartitions {

		private final TagPartitions whole;

		/** The bucketed layout beside this one, whose bucket list the sliced copies share; null without buckets. */
		private final @Nullable Bucketed bucketed;

		private final int groups;

		private final SliceHash hash;

		private final PreparedStatement insert;

		private final PreparedStatement page;

		Sliced(CqlSession session, CassandraJournalOptions options, TagPartitions whole) {
			super(session, options);
			this.whole = whole;
			this.bucketed = (whole instanceof Bucketed b) ? b : null;
			this.groups = options.tagSliceGroups();
			this.hash = options.sliceHash();
			String table = options.requireKeyspace() + "." + options.tagIndexSlicedTable();
			if (this.bucketed == null) {
				this.insert = this.statements.write("INSERT INTO " + table + " (tag, slice_group, timestamp, "
						+ "persistence_id, sequence_nr, payload, tags) VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ?");
				this.page = this.statements.read("SELECT " + COLUMNS + " FROM " + table + " WHERE tag = ? AND slice_group = ? "
						+ "AND (timestamp, persistence_id, sequence_nr) > (?, ?, ?) AND (timestamp) <= (?) LIMIT ?");
			}
			else {
				this.insert = this.statements.write("INSERT INTO " + table + " (tag, bucket, slice_group, timestamp, "
						+ "persistence_id, sequence_nr, payload, tags) VALUES (?, ?, ?, ?, ?, ?, ?, ?) USING TTL ?");
				this.page = this.statements.read("SELECT " + COLUMNS + " FROM " + table + " WHERE tag = ? AND bucket = ? "
						+ "AND slice_group = ? AND (timestamp, persistence_id, sequence_nr) > (?, ?, ?) "
						+ "AND (timestamp) <= (?) LIMIT ?");
			}
		}

		@Override
		public int copies() {
			return this.whole.copies() + 1;
		}

		private int groupOf(TagRow row) {
			return TagSlices.groupOf(this.hash, row.persistenceId(), this.groups);
		}

		/** @return the row's partition in the sliced table: (tag, group) or (tag, bucket, group) */
		private List<Object> partitionOf(TagRow row) {
			Bucketed b = this.bucketed;
			return (b == null) ? List.of(row.tag(), groupOf(row))
					: List.of(row.tag(), b.bucketing.bucketOf(row.timestamp()), groupOf(row));
		}

		private BoundStatement insertOf(TagRow row) {
			Bucketed b = this.bucketed;
			if (b == null) {
				return this.insert.bind(row.tag(), groupOf(row), row.timestamp(), row.persistenceId(), row.sequenceNr(),
						row.payload(), row.tags(), this.ttl);
			}
			return this.insert.bind(row.tag(), b.bucketing.bucketOf(row.timestamp()), groupOf(row), row.timestamp(),
					row.persistenceId(), row.sequenceNr(), row.payload(), row.tags(), this.ttl);
		}

		@Override
		CompletionStage<Void> listBuckets(List<TagRow> rows) {
			return this.whole.listBuckets(rows);
		}

		@Override
		public CompletionStage<Void> write(List<TagRow> rows, long writeTime) {
			Map<List<Object>, BatchStatementBuilder> byPartition = new LinkedHashMap<>();
			for (TagRow row : rows) {
				byPartition.computeIfAbsent(partitionOf(row), (k) -> BatchStatement.builder(BatchType.UNLOGGED))
					.addStatement(insertOf(row));
			}
			// The buckets are listed before either copy is written (the whole layout's write finds them listed).
			return listBuckets(rows).thenCompose((listed) -> CompletableFuture.allOf(
					this.whole.write(rows, writeTime).toCompletableFuture(),
					executeBatches(byPartition, writeTime).toCompletableFuture()));
		}

		@Override
		public CompletionStage<List<BoundStatement>> inserts(List<TagRow> rows) {
			// The whole layout's inserts complete once the buckets are listed.
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
			Bucketed b = this.bucketed;
			if (b == null) {
				return collect(this.session.executeAsync(this.page.bind(tag, group, after.timestamp(),
						after.persistenceId(), after.sequenceNr(), upperTimestamp, limit)),
						new ArrayList<>(Math.min(limit, 1024)));
			}
			return b.rows(tag, after, upperTimestamp, limit, (bucket, max) -> this.session.executeAsync(this.page
				.bind(tag, bucket, group, after.timestamp(), after.persistenceId(), after.sequenceNr(), upperTimestamp,
						max)));
		}

	}

}
