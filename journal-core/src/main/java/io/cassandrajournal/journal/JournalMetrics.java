package io.cassandrajournal.journal;

import java.time.Duration;

/**
 * Told about every journal operation, for metrics. Implementations must be cheap and never throw.
 * {@link MicrometerJournalMetrics} records them as meters.
 */
public interface JournalMetrics {

	/** Records nothing. */
	JournalMetrics NONE = new JournalMetrics() {
	};

	/**
	 * @param result the stored append
	 * @param took how long the append took
	 */
	default void appended(AppendResult result, Duration took) {
	}

	/**
	 * @param persistenceId the entity whose append lost a race
	 */
	default void conflict(String persistenceId) {
	}

	/**
	 * @param persistenceId the entity whose append failed for another reason
	 * @param error the failure
	 */
	default void appendFailed(String persistenceId, Throwable error) {
	}

	/**
	 * @param events how many events a replay delivered
	 * @param took how long it took
	 */
	default void replayed(long events, Duration took) {
	}

	/**
	 * The node refused a logged batch of tag row copies as too large ({@code batch_size_fail_threshold}) on the
	 * events-then-tags path of the segment-aware tag index: a batch of several rows is then split in halves, each
	 * sent as its own logged batch (the copies of every row stay together); a single row is written as separate
	 * copies, which may disagree if that write then fails.
	 * @param rows the tag rows in the refused batch
	 * @param separateCopies whether the rows are now written as separate copies (a single row); else the batch was
	 * split in halves
	 */
	default void tagCopiesBatchRefused(int rows, boolean separateCopies) {
	}

}
