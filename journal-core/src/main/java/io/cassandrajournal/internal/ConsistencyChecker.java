package io.cassandrajournal.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;

import io.cassandrajournal.journal.ConsistencyReport;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;

/**
 * Compares a persistenceId's head with the sequence numbers actually stored, reading only the
 * {@code sequence_nr} column, page by page.
 */
public final class ConsistencyChecker {

	private final CqlSession session;

	private final JournalStatements statements;

	private final EventReader reader;

	public ConsistencyChecker(CqlSession session, JournalStatements statements, EventReader reader) {
		this.session = session;
		this.statements = statements;
		this.reader = reader;
	}

	public CompletionStage<ConsistencyReport> check(String persistenceId) {
		return this.reader.head(persistenceId).thenCompose((head) -> {
			Scan scan = new Scan();
			if (head == 0) {
				return CompletableFuture.completedFuture(scan.report(persistenceId, head));
			}
			return scanPartitions(persistenceId, 0, this.reader.partitionOf(head), scan)
				.thenApply((ignored) -> scan.report(persistenceId, head));
		});
	}

	private CompletionStage<Void> scanPartitions(String persistenceId, long partition, long lastPartition, Scan scan) {
		CompletionStage<Void> current = AsyncPaging.forEachRow(
				this.session.executeAsync(this.statements.selectSequenceNrs.bind(persistenceId, partition)),
				(row) -> scan.accept(row.getLong(0)));
		return (partition == lastPartition) ? current
				: current.thenCompose((ignored) -> scanPartitions(persistenceId, partition + 1, lastPartition, scan));
	}

	/** Accumulates stored sequence numbers in ascending order; only runs of missing numbers are kept. */
	private static final class Scan {

		private final List<SequenceRange> missing = new ArrayList<>();

		private long count;

		private long previous;

		void accept(long sequenceNr) {
			if (this.count > 0 && sequenceNr > this.previous + 1) {
				this.missing.add(new SequenceRange(this.previous + 1, sequenceNr - 1));
			}
			this.previous = sequenceNr;
			this.count++;
		}

		ConsistencyReport report(String persistenceId, long head) {
			List<SequenceRange> gaps = new ArrayList<>(this.missing);
			if (this.count == 0 && head > 0) {
				gaps.add(new SequenceRange(1, head));
			}
			else if (head > this.previous) {
				gaps.add(new SequenceRange(this.previous + 1, head));
			}
			return new ConsistencyReport(persistenceId, head, this.previous, this.count, gaps);
		}

	}

}
