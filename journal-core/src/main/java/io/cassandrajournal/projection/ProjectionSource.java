package io.cassandrajournal.projection;

import java.util.List;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagOffset;

/**
 * Where a projection's events come from: a live tag feed or one persistenceId's stream. Payloads are the
 * stored JSON text.
 */
interface ProjectionSource {

	/** @return the next batch, possibly empty */
	CompletionStage<Batch> poll();

	/**
	 * @param handledInBatch how many events of the last batch were handled (all of them, or fewer on stop)
	 * @return the offset to store: every event before it was handled
	 */
	TagOffset offsetAfter(int handledInBatch);

	/**
	 * @param offset a cursor
	 * @param limit rows to examine at most
	 * @return how many events after the cursor are waiting (see
	 * {@link io.cassandrajournal.projection.ProjectionStatus#lagEvents()})
	 */
	CompletionStage<Long> eventsAfter(TagOffset offset, int limit);

	/**
	 * @param result an append of this process
	 * @return whether it may concern this source (to wake the projection); a tag feed source then also reads again
	 * from the append's time stamp at its next poll, in case a poll passed its rows before they were visible
	 */
	boolean concerns(AppendResult result);

	/**
	 * @return the latest range of events this source found deleted by a cleanup before it read them (finding 19),
	 * or {@code null}
	 */
	default ProjectionStatus.@Nullable DeletedEvents deleted() {
		return null;
	}

	/**
	 * @param events the events
	 * @param caughtUp whether nothing more was readable when the batch was read
	 */
	record Batch(List<PersistentEvent<String>> events, boolean caughtUp) {
	}

}
