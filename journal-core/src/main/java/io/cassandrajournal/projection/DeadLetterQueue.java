package io.cassandrajournal.projection;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * Keeps skipped events so they can be listed, redelivered to the fixed handler, or discarded.
 */
public interface DeadLetterQueue {

	/**
	 * @param deadLetter the skipped event
	 * @return completes when stored
	 */
	CompletionStage<Void> add(DeadLetter deadLetter);

	/**
	 * @param projectionName the projection
	 * @param limit at most this many
	 * @return its dead letters, by persistenceId and sequence number
	 */
	CompletionStage<List<DeadLetter>> list(String projectionName, int limit);

	/**
	 * @param deadLetter a dead letter to forget
	 * @return completes when removed
	 */
	CompletionStage<Void> remove(DeadLetter deadLetter);

}
