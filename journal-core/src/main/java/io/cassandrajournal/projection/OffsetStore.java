package io.cassandrajournal.projection;

import java.util.Optional;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.query.TagOffset;

/**
 * Where projections keep their cursors. In a cluster it must be one shared database (as the journal is),
 * not one per node. Offsets of persistenceId projections use {@link TagOffset#sequenceNr()}.
 */
public interface OffsetStore {

	/**
	 * @param id the projection
	 * @return its stored offset, if any
	 */
	CompletionStage<Optional<TagOffset>> load(ProjectionId id);

	/**
	 * @param id the projection
	 * @param offset the offset before which every event was handled
	 * @return completes when stored
	 */
	CompletionStage<Void> save(ProjectionId id, TagOffset offset);

	/**
	 * Forgets the offset: the projection starts from the beginning next time.
	 * @param id the projection
	 * @return completes when deleted
	 */
	CompletionStage<Void> delete(ProjectionId id);

}
