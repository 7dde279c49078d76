package io.cassandrajournal.projection;

import java.util.List;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.journal.AppendResult;

/**
 * A registered control whose work is split into segments: a {@link SegmentedProjection} or a {@link SharedFanOut}.
 * Where this fits: {@link ProjectionEngine} wakes it on appends and answers {@link ProjectionEngine#segments},
 * {@link ProjectionEngine#readSegments} and {@link ProjectionEngine#readSegmentOwners} from it.
 */
interface SegmentedControl extends ProjectionControl {

	/** @return each segment as this instance holds it (see {@link ProjectionEngine#segments}) */
	List<SegmentStatus> segmentStatus();

	/** @return each segment with its lease row, stored cursor and lag (see {@link ProjectionEngine#readSegments}) */
	CompletionStage<List<SegmentStatus>> readSegmentStatus();

	/** @return each segment with its owner (see {@link ProjectionEngine#readSegmentOwners}) */
	CompletionStage<List<SegmentStatus>> readSegmentOwners();

	/** @param result an append of this process, handed to the segments this instance runs */
	void wake(AppendResult result);

}
