package io.cassandrajournal.snapshot;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * Stores snapshots of entity state so recovery replays only the events after the latest one. Saving the
 * same persistenceId and sequence number twice keeps the last write.
 */
public interface SnapshotStore {

	/**
	 * @param persistenceId the entity
	 * @param sequenceNr the last event the state includes (at least 1)
	 * @param state the state, serialized to JSON
	 * @return completes when stored
	 */
	CompletionStage<Void> save(String persistenceId, long sequenceNr, Object state);

	/**
	 * @param <S> the state type
	 * @param persistenceId the entity
	 * @param maxSequenceNr the highest sequence number wanted ({@code Long.MAX_VALUE} for the latest)
	 * @param type the state type
	 * @return the latest snapshot at or below {@code maxSequenceNr} that reads as {@code type}, if any. A
	 * snapshot that does not (another writer's, such as the TypeScript implementation's, in another state
	 * shape) is stepped over with a warning, once per snapshot, for the next older one; at most
	 * four (the newest and three older) are tried, then none is returned and the caller replays the events
	 */
	<S> CompletionStage<Optional<Snapshot<S>>> loadLatest(String persistenceId, long maxSequenceNr, Class<S> type);

	/**
	 * @param persistenceId the entity
	 * @param sequenceNr snapshots strictly below it are deleted
	 * @return completes when deleted
	 */
	CompletionStage<Void> deleteOlderThan(String persistenceId, long sequenceNr);

}
