package io.cassandrajournal.query;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.JournalTables;
import io.cassandrajournal.internal.RowValues;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.internal.TagPartitions;
import io.cassandrajournal.journal.CassandraJournal;

/**
 * Writes the tag index rows (in the configured layout, bucketed or not) of events appended while the tag
 * index was off. Walks every persistenceId and reads its events; each tag row is an upsert of the same
 * primary key the journal would have written, so running it twice, or over events that are already indexed,
 * creates no duplicates. Each chunk of events is read once, with its write times, straight from the events
 * table (one read per partition it spans); the head once per persistenceId. Safe to run while the application appends (new appends index themselves once
 * {@code useTagIndex} is on).
 * <p>
 * Each tag row carries its event's own write time ({@code WRITETIME(payload)}, read in the same read as the events), as the
 * append would have written it. So a {@code deleteTo} (with the tag index on) that deletes an event and its tag
 * rows between the backfill's read of the event and its tag row write still wins: its tombstones are newer than
 * the event, and the late tag row is written under them. With a time stamp of its own, the backfill's write
 * would be newer than the delete and bring the deleted event back into tag queries and tag projections. An
 * event already gone when its write time is read is skipped.
 * <p>
 * Load and memory are bounded: one persistenceId at a time, its events read {@value #EVENTS_PER_CHUNK}
 * at a time, and at most {@value #MAX_IN_FLIGHT_WRITES} event writes (each one unlogged batch per tag
 * partition of the event) in flight at once.
 */
public final class TagIndexBackfill {

	/**
	 * Event writes in flight at once: enough to keep a few coordinators busy without queueing thousands of
	 * requests on the driver's connections (the append path of a busy application shares them).
	 */
	static final int MAX_IN_FLIGHT_WRITES = 8;

	/** Events read and held per round of writes. */
	static final int EVENTS_PER_CHUNK = 500;

	private static final int IDS_PER_PAGE = 100;

	private final CassandraJournal journal;

	private final TagPartitions partitions;

	private final CqlSession session;

	/** The events of a chunk with the write times their tag rows take: one read per chunk and partition. */
	private final PreparedStatement selectEvents;

	private final long partitionSize;

	private TagIndexBackfill(CassandraJournal journal, CqlSession session, CassandraJournalOptions options) {
		this.journal = journal;
		this.partitions = TagPartitions.create(session, options);
		this.session = session;
		this.selectEvents = new JournalStatements.Statements(session, options)
			.read("SELECT sequence_nr, timestamp, payload, tags, WRITETIME(payload) FROM " + options.requireKeyspace()
					+ "."
					+ options.eventsTable()
					+ " WHERE persistence_id = ? AND partition_nr = ? AND sequence_nr >= ? AND sequence_nr <= ?");
		this.partitionSize = options.partitionSize();
	}

	/**
	 * @param journal the journal whose events to index
	 * @param session its session
	 * @param options its options (the tag index table is created if missing)
	 * @return the tool
	 */
	public static TagIndexBackfill create(CassandraJournal journal, CqlSession session, CassandraJournalOptions options) {
		SchemaManager.ensure(session, options, JournalTables.tagIndexTables(options));
		return new TagIndexBackfill(journal, session, options);
	}

	/** @return how many tag rows were written */
	public CompletionStage<Long> run() {
		AtomicLong rows = new AtomicLong();
		return page(null, rows).thenApply((ignored) -> rows.get());
	}

	private CompletionStage<Void> page(String afterId, AtomicLong rows) {
		return this.journal.persistenceIds(afterId, IDS_PER_PAGE).thenCompose((ids) -> {
			CompletionStage<Void> chain = CompletableFuture.completedFuture(null);
			for (String id : ids) {
				chain = chain.thenCompose((ignored) -> index(id, rows));
			}
			return (ids.size() < IDS_PER_PAGE) ? chain
					: chain.thenCompose((ignored) -> page(ids.get(ids.size() - 1), rows));
		});
	}

	private CompletionStage<Void> index(String persistenceId, AtomicLong rows) {
		// Up to the head read now: events appended later index themselves.
		return this.journal.highestSequenceNr(persistenceId).thenCompose((head) -> chunk(persistenceId, 1, head, rows));
	}

	private CompletionStage<Void> chunk(String persistenceId, long from, long head, AtomicLong rows) {
		if (from > head) {
			return CompletableFuture.completedFuture(null);
		}
		long to = Math.min(head, from + EVENTS_PER_CHUNK - 1);
		return read(persistenceId, from, to).thenCompose((writes) -> writeWindowed(writes, rows))
			.thenCompose((ignored) -> chunk(persistenceId, to + 1, head, rows));
	}

	/** One event's tag rows and the write time they are written with: the event's own. */
	private record Write(List<TagPartitions.TagRow> rows, long writeTime) {
	}

	/**
	 * Reads the events of {@code [from, to]} still stored, with their write times, one partition after the
	 * other (each paged to its end).
	 * @return the tag rows to write, per event with tags
	 */
	private CompletionStage<List<Write>> read(String persistenceId, long from, long to) {
		List<Write> writes = new ArrayList<>();
		long lastPartition = (to - 1) / this.partitionSize;
		CompletionStage<Void> reads = CompletableFuture.completedFuture(null);
		for (long partition = (from - 1) / this.partitionSize; partition <= lastPartition; partition++) {
			long read = partition;
			reads = reads.thenCompose((ignored) -> this.session
				.executeAsync(this.selectEvents.bind(persistenceId, read, from, to))
				.thenCompose((page) -> collect(persistenceId, page, writes)));
		}
		return reads.thenApply((ignored) -> writes);
	}

	/** An event without a write time (no payload) is not indexed, as an event deleted since the read. */
	private static CompletionStage<Void> collect(String persistenceId, AsyncResultSet page, List<Write> writes) {
		for (Row row : page.currentPage()) {
			Set<String> tags = RowValues.textSet(row, 3);
			if (tags.isEmpty() || row.isNull(4)) {
				continue;
			}
			long sequenceNr = RowValues.bigint(row, 0);
			long timestamp = RowValues.bigint(row, 1);
			String payload = RowValues.text(row, 2);
			List<TagPartitions.TagRow> tagRows = new ArrayList<>(tags.size());
			for (String tag : tags) {
				tagRows.add(new TagPartitions.TagRow(tag, timestamp, persistenceId, sequenceNr,
						(payload != null) ? payload : "null", tags));
			}
			writes.add(new Write(tagRows, row.getLong(4)));
		}
		return page.hasMorePages() ? page.fetchNextPage().thenCompose((next) -> collect(persistenceId, next, writes))
				: CompletableFuture.completedFuture(null);
	}

	/** Writes with {@link #MAX_IN_FLIGHT_WRITES} lanes, each taking the next write when its last one is done. */
	private CompletionStage<Void> writeWindowed(List<Write> writes, AtomicLong rows) {
		AtomicInteger next = new AtomicInteger();
		CompletableFuture<?>[] lanes = new CompletableFuture<?>[Math.min(MAX_IN_FLIGHT_WRITES, writes.size())];
		for (int i = 0; i < lanes.length; i++) {
			lanes[i] = lane(writes, next, rows).toCompletableFuture();
		}
		return CompletableFuture.allOf(lanes);
	}

	private CompletionStage<Void> lane(List<Write> writes, AtomicInteger next, AtomicLong rows) {
		int index = next.getAndIncrement();
		if (index >= writes.size()) {
			return CompletableFuture.completedFuture(null);
		}
		Write write = writes.get(index);
		return this.partitions.write(write.rows(), write.writeTime()).thenCompose((ignored) -> {
			rows.addAndGet(write.rows().size());
			return lane(writes, next, rows);
		});
	}

}
