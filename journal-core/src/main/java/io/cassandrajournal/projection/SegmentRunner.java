package io.cassandrajournal.projection;

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

}
