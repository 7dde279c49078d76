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

}
