package io.cassandrajournal.projection;

import java.util.List;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.query.TagOffset;

/**
 * Steers one registered projection and reports its status. Every method is thread-safe.
 */
public interface ProjectionControl {

	/** @return the projection's cursor identity */
	ProjectionId id();

	/** @return its current status */
	ProjectionStatus status();

	/**
	 * Loads the stored offset and starts reading. A projection stopped by a failure resumes at the failed
	 * event.
	 * @return completes when it is running
	 */
	CompletionStage<Void> start();

	/**
	 * Stops after the event in hand and stores the offset.
	 * @return completes when stopped
	 */
	CompletionStage<Void> stop();

	/** Stops reading after the current batch; keeps the cursor. */
	void pause();

	/** Continues after {@link #pause()}. */
	void resume();

	/**
	 * Rebuilds from an offset: stops, stores the offset ({@link TagOffset#START} forgets it: replay from the
	 * beginning), starts again. A paused projection stays paused: {@link #resume()} reads from the new offset.
	 * A start, stop, pause or resume sent while the reset runs decides the state it ends in instead (the last one
	 * wins; after a stop the offset is stored and the projection left stopped). A second reset meanwhile fails
	 * with {@link ResetInProgressException}. Handlers must be idempotent.
	 * @param offset where to continue from
	 * @return completes when running again (or paused again, with the offset loaded; or stored, when stopped)
	 */
	CompletionStage<Void> reset(TagOffset offset);

	/**
	 * Gives up on the event the projection is failing or stopped at: it becomes a dead letter and the
	 * projection continues with the next one (restarting it if it was stopped by the failure).
	 */
	void skipCurrent();

	/**
	 * @param limit at most this many
	 * @return the projection's dead letters
	 */
	CompletionStage<List<DeadLetter>> deadLetters(int limit);

	/**
	 * Hands the projection's dead letters to its (fixed) handler again, in persistenceId and sequence order;
	 * each one handled is removed from the queue and releases the events parked behind it. A projection split
	 * into segments redelivers each segment's letters through that segment's runner; with sharing, only the
	 * segments this instance runs (call it on every instance; the other segments' letters stay for their owners).
	 * @return how many were handled
	 */
	CompletionStage<Integer> redeliverDeadLetters();

}
