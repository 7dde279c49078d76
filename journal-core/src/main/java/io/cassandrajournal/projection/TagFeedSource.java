package io.cassandrajournal.projection;

import java.util.concurrent.CompletionStage;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.query.LiveTagFeed;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.query.TaggedEvent;

/**
 * A by-tag projection's source. A batch's events are handled in order; only a fully handled batch moves
 * the stored offset (to the feed's safe offset), so a stop in the middle re-delivers the batch.
 * <p>
 * An empty poll that read nothing new and let the sweep pass no delivered event leaves the offset to store as it
 * was, although the feed's safe offset moved with the sweep's floor ({@code now - backtrack-window}): resuming from
 * either delivers the same events, so there is nothing to save (issue 17: under a steady load the projection saved
 * its offset, a compare-and-set, after nearly every poll). And a wake-up for an append whose events the feed has
 * delivered already does not concern it: there is nothing to read for it.
 */
final class TagFeedSource implements ProjectionSource {

	private final LiveTagFeed feed;

	private TagOffset beforeBatch;

	private TagOffset afterBatch;

	private int batchSize;

	public TagFeedSource(LiveTagFeed feed) {
		this.feed = feed;
		this.beforeBatch = feed.safeOffset();
		this.afterBatch = this.beforeBatch;
	}

	@Override
	public CompletionStage<Batch> poll() {
		this.beforeBatch = this.afterBatch;
		TagOffset headBefore = this.feed.headOffset();
		int rememberedBefore = this.feed.rememberedEvents();
		long skippedBefore = this.feed.lateRowsSkipped();
		return this.feed.poll().thenApply((events) -> {
			// Nothing delivered or skipped, the head where it was, no remembered event passed by the sweep: only the
			// sweep's floor moved with the clock.
			boolean onlyTimeMoved = events.isEmpty() && this.feed.headOffset().equals(headBefore)
					&& this.feed.rememberedEvents() == rememberedBefore && this.feed.lateRowsSkipped() == skippedBefore;
			if (!onlyTimeMoved) {
				this.afterBatch = this.feed.safeOffset();
			}
			this.batchSize = events.size();
			return new Batch(events.stream().map(TaggedEvent::event).toList(), this.feed.caughtUp());
		});
	}

	@Override
	public TagOffset offsetAfter(int handledInBatch) {
		return (handledInBatch >= this.batchSize) ? this.afterBatch : this.beforeBatch;
	}

	@Override
	public CompletionStage<Long> eventsAfter(TagOffset offset, int limit) {
		return this.feed.countAfter(offset, limit);
	}

	@Override
	public boolean concerns(AppendResult result) {
		// The append's tags are the union of its events' tags: wake on any positive tag (a cheap superset).
		boolean concerns = result.tags().stream()
			.anyMatch((tag) -> this.feed.filter().anyTags().contains(tag) || this.feed.filter().allTags().contains(tag));
		// A poll may have passed its rows before they were visible: unless the feed delivered one of its events,
		// the next head read starts at its time stamp. If it did, the append needs no poll.
		return concerns && this.feed.rewindIfUndelivered(result.timestamp().toEpochMilli(),
				result.persistenceId(), result.firstSequenceNr(), result.lastSequenceNr());
	}

}
