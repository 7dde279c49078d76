package io.cassandrajournal.journal;

/**
 * Told about every append this process made successfully, right after it is stored. Projections in the same
 * process use it to wake up at once instead of waiting for their next poll. Called on a driver thread:
 * return quickly and never block.
 */
@FunctionalInterface
public interface AppendListener {

	/**
	 * @param result what was appended
	 */
	void onAppended(AppendResult result);

}
