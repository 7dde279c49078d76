package io.cassandrajournal.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagOffset;

/**
 * A by-persistenceId projection's source: pages of the entity's stream after the last handled sequence
 * number. Offsets are exact per event.
 */
public final class PersistenceIdSource implements ProjectionSource {

	private final Journal journal;

	private final String persistenceId;

	private final int pageSize;

	private long nextSequenceNr;

	private List<PersistentEvent<String>> batch = List.of();

	private long beforeBatch;

	private static final long GAP_GRACE_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

	private long gapSeenAt = -1;

	private long gapFrom;

	public PersistenceIdSource(Journal journal, String persistenceId, TagOffset start, int pageSize) {
		this.journal = journal;
		this.persistenceId = persistenceId;
		this.pageSize = pageSize;
		this.nextSequenceNr = start.sequenceNr() + 1;
		this.beforeBatch = start.sequenceNr();
	}

	@Override
	public CompletionStage<Batch> poll() {
		List<PersistentEvent<String>> events = new ArrayList<>();
		long from = this.nextSequenceNr;
		long to = from + this.pageSize - 1;
		return this.journal.replayRaw(this.persistenceId, from, to, events::add).thenCompose((last) -> {
			this.beforeBatch = from - 1;
			this.batch = events;
			if (!events.isEmpty()) {
				this.nextSequenceNr = events.get(events.size() - 1).sequenceNr() + 1;
				return java.util.concurrent.CompletableFuture.completedFuture(new Batch(events, events.size() < this.pageSize));
			}
			// Nothing in this range: nothing new, an append between its claim and its batch, or a gap a crash
			// left (claimed, never written). Step over a gap only once it has outlived any append in flight.
			return this.journal.highestSequenceNr(this.persistenceId).thenApply((head) -> {
				if (head < from) {
					this.gapSeenAt = -1;
					return new Batch(events, true);
				}
				long now = System.nanoTime();
				if (this.gapSeenAt < 0 || this.gapFrom != from) {
					this.gapSeenAt = now;
					this.gapFrom = from;
				}
				if (now - this.gapSeenAt >= GAP_GRACE_NANOS) {
					this.gapSeenAt = -1;
					long skipTo = Math.min(head, to);
					this.nextSequenceNr = skipTo + 1;
					this.beforeBatch = skipTo;
					return new Batch(events, head <= to);
				}
				return new Batch(events, true);
			});
		});
	}

	@Override
	public TagOffset offsetAfter(int handledInBatch) {
		if (handledInBatch == 0 || this.batch.isEmpty()) {
			return new TagOffset(0, this.persistenceId, this.beforeBatch);
		}
		PersistentEvent<String> last = this.batch.get(Math.min(handledInBatch, this.batch.size()) - 1);
		return new TagOffset(last.timestamp().toEpochMilli(), this.persistenceId, last.sequenceNr());
	}

	@Override
	public CompletionStage<Long> eventsAfter(TagOffset offset, int limit) {
		return this.journal.highestSequenceNr(this.persistenceId)
			.thenApply((head) -> Math.max(0, head - offset.sequenceNr()));
	}

	@Override
	public boolean concerns(AppendResult result) {
		return result.persistenceId().equals(this.persistenceId);
	}

}
