package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;

import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;

/**
 * Compares a persistenceId's head with the sequence numbers actually stored, reading only the
 * {@code sequence_nr} column, page by page. Numbers up to the {@linkplain DeletionMarks deletion mark} were
 * deleted on purpose and are not gaps; every other number from 1 to the head without an event is one, the
 * very first ones included (a first append that died between its claim and its events).
 */
final class ConsistencyChecker {

	private final CqlSession session;

	private final JournalStatements statements;

	private final EventReader reader;

	private final DeletionMarks marks;

	public ConsistencyChecker(CqlSession session, JournalStatements statements, EventReader reader,
			DeletionMarks marks) {
		this.session = session;
		this.statements = statements;
		this.reader = reader;
		this.marks = marks;
	}

	public CompletionStage<ConsistencyReport> check(String persistenceId) {
		CompletableFuture<Long> head = this.reader.head(persistenceId).toCompletableFuture();
		CompletableFuture<Long> deleted = this.marks.deletedTo(persistenceId).toCompletableFuture();
		return head.thenCombine(deleted, (h, d) -> new long[] { h, d }).thenCompose((found) -> {
			long top = found[0];
			long deletedTo = Math.min(found[1], top);
			Scan scan = new Scan(deletedTo);
			if (deletedTo == top) {
				return CompletableFuture.completedFuture(scan.report(persistenceId, top));
			}
			// Partitions wholly at or below the mark were emptied by a completed deleteTo: start after them.
			return scanPartitions(persistenceId, this.reader.partitionOf(deletedTo + 1), this.reader.partitionOf(top),
					scan)
				.thenApply((ignored) -> scan.report(persistenceId, top));
		});
	}

	private CompletionStage<Void> scanPartitions(String persistenceId, long partition, long lastPartition, Scan scan) {
		CompletionStage<Void> current = AsyncPaging.forEachRow(
				this.session.executeAsync(this.statements.selectSequenceNrs.bind(persistenceId, partition)),
				(row) -> scan.accept(row.getLong(0)));
		return (partition == lastPartition) ? current
				: current.thenCompose((ignored) -> scanPartitions(persistenceId, partition + 1, lastPartition, scan));
	}

	/**
	 * Accumulates stored sequence numbers in ascending order; only runs of missing numbers after the deletion
	 * mark are kept.
	 */
	private static final class Scan {

		private final List<SequenceRange> missing = new ArrayList<>();

		private long count;

		private long highest;

		/** The first number not yet accounted for. */
		private long next;

		Scan(long deletedTo) {
			this.next = deletedTo + 1;
		}

		void accept(long sequenceNr) {
			if (sequenceNr > this.next) {
				this.missing.add(new SequenceRange(this.next, sequenceNr - 1));
			}
			this.next = Math.max(this.next, sequenceNr + 1);
			this.highest = Math.max(this.highest, sequenceNr);
			this.count++;
		}

		ConsistencyReport report(String persistenceId, long head) {
			List<SequenceRange> gaps = new ArrayList<>(this.missing);
			if (head >= this.next) {
				gaps.add(new SequenceRange(this.next, head));
			}
			return new ConsistencyReport(persistenceId, head, this.highest, this.count, gaps);
		}

	}

}
