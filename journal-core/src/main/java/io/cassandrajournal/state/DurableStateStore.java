package io.cassandrajournal.state;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

/**
 * A key-value store with revisions: every write names the revision it creates and succeeds only if the
 * stored revision is the one before it. Projection offsets are kept here.
 */
public interface DurableStateStore {

	/**
	 * @param <S> the value type
	 * @param persistenceId the key
	 * @param type the value type
	 * @return the stored value, if any
	 */
	<S> CompletionStage<Optional<DurableState<S>>> get(String persistenceId, Class<S> type);

	/**
	 * Writes revision {@code revision}: an insert when it is 1, else an update that requires the stored
	 * revision to be {@code revision - 1}.
	 * @param persistenceId the key
	 * @param revision the new revision, at least 1
	 * @param value the value
	 * @return completes when written; fails with {@link DurableStateConflictException} if the stored
	 * revision is another
	 */
	CompletionStage<Void> upsert(String persistenceId, long revision, Object value);

	/**
	 * Deletes the value if it is at the given revision.
	 * @param persistenceId the key
	 * @param revision the revision expected
	 * @return completes when deleted (or absent); fails with {@link DurableStateConflictException} if
	 * another revision is stored
	 */
	CompletionStage<Void> delete(String persistenceId, long revision);

}
