package io.cassandrajournal.query;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

import com.datastax.oss.driver.api.core.CqlSession;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.TagPartitions;
import io.cassandrajournal.internal.JournalTables;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.PersistentEvent;

/**
 * Writes the tag index rows (in the configured layout, bucketed or not) of events appended while the tag index was off. Walks every
 * persistenceId and replays its events; each tag row is an upsert of the same primary key the journal would
 * have written, so running it twice, or over events that are already indexed, creates no duplicates. Safe
 * to run while the application appends (new appends index themselves once {@code useTagIndex} is on).
 */
public final class TagIndexBackfill {

	private final CassandraJournal journal;

	private final TagPartitions partitions;

	private TagIndexBackfill(CassandraJournal journal, CqlSession session, CassandraJournalOptions options) {
		this.journal = journal;
		this.partitions = TagPartitions.create(session, options);
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
		return this.journal.persistenceIds(afterId, 100).thenCompose((ids) -> {
			CompletionStage<Void> chain = CompletableFuture.completedFuture(null);
			for (String id : ids) {
				chain = chain.thenCompose((ignored) -> index(id, rows));
			}
			return (ids.size() < 100) ? chain : chain.thenCompose((ignored) -> page(ids.get(ids.size() - 1), rows));
		});
	}

	private CompletionStage<Void> index(String persistenceId, AtomicLong rows) {
		List<CompletableFuture<?>> writes = new ArrayList<>();
		return this.journal.replayRaw(persistenceId, 1, Long.MAX_VALUE, (PersistentEvent<String> event) -> {
			List<TagPartitions.TagRow> tagRows = new ArrayList<>(event.tags().size());
			for (String tag : event.tags()) {
				tagRows.add(new TagPartitions.TagRow(tag, event.timestamp().toEpochMilli(), event.persistenceId(),
						event.sequenceNr(), event.payload(), event.tags()));
			}
			if (!tagRows.isEmpty()) {
				writes.add(this.partitions.write(tagRows).toCompletableFuture());
				rows.addAndGet(tagRows.size());
			}
		}).thenCompose((last) -> CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)));
	}

}
