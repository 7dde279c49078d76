package io.cassandrajournal.projection;

import java.util.concurrent.CompletionStage;

import io.cassandrajournal.journal.AppendResult;

/**
 * What runs one segment while this instance holds it: a {@link ProjectionRunner} for a segment of a projection by
 * tag (or of one persistenceId), or a {@link FanOutSegment}, the runners of a shared fan-out's entities in the
 * segment's slices. Where this fits: {@link SegmentOwnership} starts one per lease term and stops it when the term
 * ends; {@link SegmentedProjection} and {@link SharedFanOut} steer it.
 */
interface SegmentRunner extends ProjectionControl {

	/**
	 * @param result an append of this process: read again at once if it concerns this segment
	 */
	void wake(AppendResult result);

	/**
	 * Stops for good, as {@link #stop()} does, when the segment's term ends or the segment is handed over: nothing
	 * starts this runner again, not even a reset of it in progress (whose cursor write the term still fences); the
	 * next term of the segment makes a new runner. A plain stop would be undone by such a reset, and the runner
	 * left running outside any term (docs/reliability.md, finding 29, item 9).
	 * @return completes once the batch in hand has ended (its cursor stored)
	 */
	CompletionStage<Void> retire();

}
