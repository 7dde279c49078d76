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

	/**
	 * Moves the cursor for a reset (a rebuild from the start, or an operator's offset): {@link #delete} for
	 * {@link TagOffset#START}, else {@link #save}. Stores that know more than one cursor per projection (a
	 * projection whose number of segments was changed) also forget the other cursors there.
	 * @param id the projection
	 * @param to where it starts again
	 * @return completes when stored
	 */
	default CompletionStage<Void> reset(ProjectionId id, TagOffset to) {
		return TagOffset.START.equals(to) ? delete(id) : save(id, to);
	}

}
