package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.JournalStatements;

/**
 * The delete path of {@link io.cassandrajournal.journal.CassandraJournal}: {@code deleteTo}, bounded by the
 * stored head, without blocking the caller.
 * <ol>
 * <li>Read the head and the last {@linkplain DeletionMarks deletion mark} (asynchronously). The range deleted is
 * {@code (mark, min(toSequenceNr, head)]}: nothing above the head is stored, and everything up to the mark was
 * deleted by an earlier, completed call. So {@code deleteTo(id, Long.MAX_VALUE)} touches only the partitions
 * that hold events.</li>
 * <li>Partition after partition: with the tag index on, read the rows' keys and tags ({@code sequence_nr,
 * timestamp, tags}, no payload, page by page) and delete their tag index rows ({@link TagIndexDeletes}); then
 * delete the events (the whole partition when it lies entirely in the range, else
 * {@code sequence_nr <= upper}).</li>
 * <li>Record the new deletion mark.</li>
 * </ol>
 * Tag rows go before their events, so a failure part-way leaves events that replay still returns and that a
 * retry of the same call finds and deletes, never tag rows pointing at deleted events (which no retry could
 * find again: the event row is the only place that says which tag rows an event has). The mark goes last, so
 * it never claims a deletion that did not finish.
 */
final class EventDeleter {

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final JournalStatements statements;

	private final EventReader reader;

	private final DeletionMarks marks;

	/** Only with the tag index on. */
	private final @Nullable TagIndexDeletes tagIndex;

	private final @Nullable PreparedStatement selectTagged;

	public EventDeleter(CqlSession session, CassandraJournalOptions options, JournalStatements statements,
			EventReader reader, DeletionMarks marks) {
		this.session = session;
		this.options = options;
		this.statements = statements;
		this.reader = reader;
		this.marks = marks;
		if (options.useTagIndex()) {
			this.tagIndex = new TagIndexDeletes(session, options);
			this.selectTagged = new JournalStatements.Statements(session, options)
				.read("SELECT sequence_nr, timestamp, tags FROM " + options.requireKeyspace() + "."
						+ options.eventsTable() + " WHERE persistence_id = ? AND partition_nr = ? AND sequence_nr <= ?");
		}
		else {
			this.tagIndex = null;
			this.selectTagged = null;
		}
	}

	/**
	 * @param persistenceId the entity
	 * @param toSequenceNr the last sequence number to delete; anything above the head is ignored
	 * @return completes when the events and their tag index rows are deleted and the mark is recorded
	 */
	public CompletionStage<Void> deleteTo(String persistenceId, long toSequenceNr) {
		CompletableFuture<Long> head = this.reader.head(persistenceId).toCompletableFuture();
		CompletableFuture<Long> deleted = this.marks.deletedTo(persistenceId).toCompletableFuture();
		return head.thenCombine(deleted, (h, d) -> new long[] { Math.min(toSequenceNr, h), d })
			.thenCompose((range) -> {
				long upper = range[0];
				long alreadyDeleted = range[1];
				if (upper <= alreadyDeleted) {
					return CompletableFuture.completedFuture(null);
				}
				return deletePartitions(persistenceId, this.reader.partitionOf(alreadyDeleted + 1),
						this.reader.partitionOf(upper), upper)
					.thenCompose((ignored) -> this.marks.mark(persistenceId, upper));
			});
	}

	private CompletionStage<Void> deletePartitions(String persistenceId, long partition, long lastPartition,
			long upper) {
		CompletionStage<Void> current = deleteTagRows(persistenceId, partition, upper)
			.thenCompose((ignored) -> deleteEvents(persistenceId, partition, lastPartition, upper));
		return (partition == lastPartition) ? current
				: current.thenCompose((ignored) -> deletePartitions(persistenceId, partition + 1, lastPartition, upper));
	}

	private CompletionStage<Void> deleteEvents(String persistenceId, long partition, long lastPartition, long upper) {
		boolean whole = partition < lastPartition || upper % this.options.partitionSize() == 0;
		return this.session
			.executeAsync(whole ? this.statements.deletePartition.bind(persistenceId, partition)
					: this.statements.deleteRange.bind(persistenceId, partition, upper))
			.thenApply((ignored) -> null);
	}

	private CompletionStage<Void> deleteTagRows(String persistenceId, long partition, long upper) {
		if (this.tagIndex == null || this.selectTagged == null) {
			return CompletableFuture.completedFuture(null);
		}
		return deleteTagRows(this.tagIndex, persistenceId,
				this.session.executeAsync(this.selectTagged.bind(persistenceId, partition, upper)));
	}

	/** One page of events at a time: memory is bounded by the page size. */
	private CompletionStage<Void> deleteTagRows(TagIndexDeletes index, String persistenceId,
			CompletionStage<AsyncResultSet> page) {
		return page.thenCompose((rs) -> {
			List<TagIndexDeletes.Key> keys = new ArrayList<>();
			for (Row row : rs.currentPage()) {
				Set<String> tags = row.getSet("tags", String.class);
				for (String tag : tags) {
					keys.add(new TagIndexDeletes.Key(tag, row.getLong("timestamp"), persistenceId,
							row.getLong("sequence_nr")));
				}
			}
			CompletionStage<Void> deleted = keys.isEmpty() ? CompletableFuture.completedFuture(null) : index.delete(keys);
			return deleted.thenCompose((ignored) -> rs.hasMorePages()
					? deleteTagRows(index, persistenceId, rs.fetchNextPage())
					: CompletableFuture.<Void>completedFuture(null));
		});
	}

}
