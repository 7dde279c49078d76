package io.cassandrajournal.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * The delete path of {@link io.cassandrajournal.journal.CassandraJournal}: {@code deleteTo}, bounded by the
 * stored head, without blocking the caller.
 * <ol>
 * <li>Read the head and the last {@linkplain DeletionMarks deletion mark} (asynchronously). The range deleted is
 * {@code (mark, min(toSequenceNr, head)]}: nothing above the head is stored, and everything up to the mark was
 * deleted by an earlier, completed call. So {@code deleteTo(id, Long.MAX_VALUE)} touches only the partitions
 * that hold events.</li>
 * <li>Partition after partition, delete the events (the whole partition when it lies entirely in the range,
 * else {@code sequence_nr <= upper}).</li>
 * <li>Record the new deletion mark.</li>
 * </ol>
 * The mark goes last, so it never claims a deletion that did not finish.
 */
public final class EventDeleter {

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final JournalStatements statements;

	private final EventReader reader;

	private final DeletionMarks marks;

	public EventDeleter(CqlSession session, CassandraJournalOptions options, JournalStatements statements,
			EventReader reader, DeletionMarks marks) {
		this.session = session;
		this.options = options;
		this.statements = statements;
		this.reader = reader;
		this.marks = marks;
	}

	/**
	 * @param persistenceId the entity
	 * @param toSequenceNr the last sequence number to delete; anything above the head is ignored
	 * @return completes when the events are deleted and the mark is recorded
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
		CompletionStage<Void> current = deleteEvents(persistenceId, partition, lastPartition, upper);
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

}
