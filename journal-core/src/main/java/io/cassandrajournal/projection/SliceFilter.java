package io.cassandrajournal.projection;

import java.util.concurrent.CompletionStage;
import java.util.function.ToIntFunction;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.query.TagOffset;

/**
 * One segment's view of a projection's source: reads the whole source and keeps the events of the segment's
 * slices, so every event of an entity reaches the same segment, in order. With the segment-aware tag index the
 * source already reads only the segment's slice groups; this then drops nothing (or, for a segment smaller than
 * a group, the group's other slices). Where this fits: the engine wraps each
 * segment's {@link TagFeedSource} in it. The cursor moves like the source's: past the whole batch when every
 * kept event was handled, else not at all (the source re-delivers the batch).
 */
final class SliceFilter implements ProjectionSource {

	private final SliceRange range;

	/** The read journal's slice function. */
	private final ToIntFunction<String> slices;

	private final ProjectionSource source;

	private int kept;

	SliceFilter(SliceRange range, ToIntFunction<String> slices, ProjectionSource source) {
		this.range = range;
		this.slices = slices;
		this.source = source;
	}

	private boolean mine(String persistenceId) {
		return this.range.contains(this.slices.applyAsInt(persistenceId));
	}

	@Override
	public CompletionStage<Batch> poll() {
		return this.source.poll().thenApply((batch) -> {
			Batch mine = new Batch(batch.events().stream().filter((e) -> mine(e.persistenceId())).toList(),
					batch.caughtUp());
			this.kept = mine.events().size();
			return mine;
		});
	}

	@Override
	public TagOffset offsetAfter(int handledInBatch) {
		// The source counts the whole batch: all of it when every kept event was handled, none otherwise.
		return this.source.offsetAfter((handledInBatch >= this.kept) ? Integer.MAX_VALUE : 0);
	}

	/**
	 * Counts the source's events after the cursor: every segment's from the whole feed (an upper bound of this
	 * segment's lag), the segment's groups' from the segment-aware index.
	 */
	@Override
	public CompletionStage<Long> eventsAfter(TagOffset offset, int limit) {
		return this.source.eventsAfter(offset, limit);
	}

	@Override
	public boolean concerns(AppendResult result) {
		return mine(result.persistenceId()) && this.source.concerns(result);
	}

	@Override
	public ProjectionStatus.@Nullable DeletedEvents deleted() {
		return this.source.deleted();
	}

}
