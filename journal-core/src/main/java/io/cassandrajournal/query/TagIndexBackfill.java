package io.cassandrajournal.query;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.DroppedBucketMarks;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.JournalTables;
import io.cassandrajournal.internal.RecordedLayout;
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
 * With a bucketed tag index, buckets a retention cleanup dropped ({@code JournalCleanup.dropTagBuckets}) are not
 * refilled: a tag row stamped before its tag's drop mark is skipped (the mark of each tag is read once per
 * {@link #run}, when the tag is first met; docs/reliability.md, finding 23). A drop that runs while the backfill runs
 * may still be refilled for the tags the backfill met before it: run the two apart. Each run keeps its own marks
 * read and counts, so two runs of one instance at once do not disturb each other (they only do the work twice).
 * <p>
 * Load and memory are bounded: one persistenceId at a time, its events read {@value #EVENTS_PER_CHUNK}
 * at a time, and at most {@value #MAX_IN_FLIGHT_WRITES} event writes (each one unlogged batch per tag
 * partition of the event) in flight at once.
 */
public final class TagIndexBackfill {

	private static final Logger logger = LoggerFactory.getLogger(TagIndexBackfill.class);

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

	/** With a bucketed tag index: how far retention dropped each tag's buckets (not refilled). */
	private final @Nullable DroppedBucketMarks dropMarks;

	/**
	 * One run's state: its own, not the instance's, so that a second run started while one is on its way cannot
	 * clear the marks the first is about to take (R2's review of a91a7db, item 5: it failed on a null).
	 * @param marksRead the drop mark per tag met (epoch millis; Long.MIN_VALUE: none), read once per run
	 * @param rows tag rows written
	 * @param skipped tag rows skipped as inside a dropped range
	 */
	private record Run(Map<String, CompletableFuture<Long>> marksRead, AtomicLong rows, AtomicLong skipped) {

		Run() {
			this(new ConcurrentHashMap<>(), new AtomicLong(), new AtomicLong());
		}

	}

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
		this.dropMarks = (options.tagBucketing() != TagBucketing.NONE) ? new DroppedBucketMarks(session, options) : null;
	}

	/**
	 * @param journal the journal whose events to index
	 * @param session its session
	 * @param options its options (the tag index table is created if missing): those
	 * {@code CassandraJournal.verifyLayout} returned (then the layout record is not read here); options that leave
	 * {@code slice-hash} unset make this factory look it up (a look-up in {@code system_schema.tables} and a serial
	 * read)
	 * @return the tool
	 */
	public static TagIndexBackfill create(CassandraJournal journal, CqlSession session, CassandraJournalOptions options) {
		SchemaManager.ensure(session, options, JournalTables.tagIndexTables(options));
		// Sliced copies go to the groups of the keyspace's slice function (adopted when unset).
		return new TagIndexBackfill(journal, session, RecordedLayout.adopt(session, options));
	}

	/** @return how many tag rows were written (rows inside a dropped range are skipped, not counted) */
	public CompletionStage<Long> run() {
		Run run = new Run();
		return page(null, run).thenApply((ignored) -> {
			if (run.skipped().get() > 0) {
				logger.info("Tag index backfill: {} tag rows not written, inside ranges a retention cleanup dropped "
						+ "(JournalCleanup.dropTagBuckets; docs/reliability.md, finding 23)", run.skipped().get());
			}
			return run.rows().get();
		});
	}

	private CompletionStage<Void> page(String afterId, Run run) {
		return this.journal.persistenceIds(afterId, IDS_PER_PAGE).thenCompose((ids) -> {
			CompletionStage<Void> chain = CompletableFuture.completedFuture(null);
			for (String id : ids) {
				chain = chain.thenCompose((ignored) -> index(id, run));
			}
			return (ids.size() < IDS_PER_PAGE) ? chain
					: chain.thenCompose((ignored) -> page(ids.get(ids.size() - 1), run));
		});
	}

	private CompletionStage<Void> index(String persistenceId, Run run) {
		// Up to the head read now: events appended later index themselves.
		return this.journal.highestSequenceNr(persistenceId).thenCompose((head) -> chunk(persistenceId, 1, head, run));
	}

	private CompletionStage<Void> chunk(String persistenceId, long from, long head, Run run) {
		if (from > head) {
			return CompletableFuture.completedFuture(null);
		}
		long to = Math.min(head, from + EVENTS_PER_CHUNK - 1);
		return read(persistenceId, from, to).thenCompose((writes) -> withoutDropped(writes, run))
			.thenCompose((writes) -> writeWindowed(writes, run.rows()))
			.thenCompose((ignored) -> chunk(persistenceId, to + 1, head, run));
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

	/**
	 * Leaves out the tag rows stamped before their tag's drop mark: their bucket was dropped by a retention cleanup,
	 * and writing them would bring it back (its list entry too) while the mark still says it is gone.
	 */
	private CompletionStage<List<Write>> withoutDropped(List<Write> writes, Run run) {
		DroppedBucketMarks marks = this.dropMarks;
		if (marks == null || writes.isEmpty()) {
			return CompletableFuture.completedFuture(writes);
		}
		Set<String> tags = new LinkedHashSet<>();
		for (Write write : writes) {
			for (TagPartitions.TagRow row : write.rows()) {
				tags.add(row.tag());
			}
		}
		List<CompletableFuture<Long>> reads = new ArrayList<>(tags.size());
		for (String tag : tags) {
			reads.add(run.marksRead().computeIfAbsent(tag, (t) -> marks.droppedBefore(t)
				.thenApply((mark) -> mark.map((instant) -> instant.toEpochMilli()).orElse(Long.MIN_VALUE))
				.toCompletableFuture()));
		}
		return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply((ignored) -> {
			List<Write> kept = new ArrayList<>(writes.size());
			for (Write write : writes) {
				List<TagPartitions.TagRow> rows = new ArrayList<>(write.rows().size());
				for (TagPartitions.TagRow row : write.rows()) {
					if (row.timestamp() >= run.marksRead().get(row.tag()).join()) {
						rows.add(row);
					}
					else {
						run.skipped().incrementAndGet();
					}
				}
				if (!rows.isEmpty()) {
					kept.add((rows.size() == write.rows().size()) ? write : new Write(rows, write.writeTime()));
				}
			}
			return kept;
		});
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
