package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagOffset;

/**
 * A by-persistenceId projection's source: pages of the entity's stream after the last handled sequence
 * number, read with {@link Journal#replayContiguousRaw}: an event is never delivered before the sequence
 * numbers below it are visible or declared a crash gap (claimed, and still missing after the journal's
 * in-flight wait), so a late batch of another writer is never stepped over. Offsets are exact per event; a
 * crash gap at the end of a page moves the offset past it, except at the end of the stream: numbers claimed
 * above the last visible event are held and read again on every poll, since an event that appears there later
 * (a batch replayed from Cassandra's batch log after a restart) would otherwise never be delivered.
 */
final class PersistenceIdSource implements ProjectionSource {

	private final Journal journal;

	private final String persistenceId;

	private final int pageSize;

	private long nextSequenceNr;

	private List<PersistentEvent<String>> batch = List.of();

	private long beforeBatch;

	/** Every sequence number up to it was delivered in a batch or stepped over as a crash gap. */
	private long coveredTo;

	public PersistenceIdSource(Journal journal, String persistenceId, TagOffset start, int pageSize) {
		this.journal = journal;
		this.persistenceId = persistenceId;
		this.pageSize = pageSize;
		this.nextSequenceNr = start.sequenceNr() + 1;
		this.beforeBatch = start.sequenceNr();
		this.coveredTo = start.sequenceNr();
	}

	@Override
	public CompletionStage<Batch> poll() {
		List<PersistentEvent<String>> events = new ArrayList<>();
		long from = this.nextSequenceNr;
		long to = from + this.pageSize - 1;
		return this.journal.replayContiguousRaw(this.persistenceId, from, to, events::add).thenApply((replayed) -> {
			this.beforeBatch = from - 1;
			this.batch = events;
			long covered = Math.max(from - 1, replayed.coveredTo());
			long delivered = events.isEmpty() ? from - 1 : events.get(events.size() - 1).sequenceNr();
			boolean caughtUp = covered >= replayed.head();
			if (caughtUp && covered > delivered) {
				// Claimed numbers missing at the end of the stream: nothing waits behind them, so they are held
				// and read again on every poll, never stepped over. Their events may still appear (a logged batch
				// that Cassandra replays from its batch log after a node restart); a later append turns them into
				// a gap below a visible event, which is waited for and stepped over as usual.
				covered = delivered;
			}
			this.coveredTo = covered;
			this.nextSequenceNr = this.coveredTo + 1;
			return new Batch(events, caughtUp);
		});
	}

	@Override
	public TagOffset offsetAfter(int handledInBatch) {
		if (handledInBatch >= this.batch.size()) {
			// The whole batch, and any crash gap stepped over with it.
			long timestamp = this.batch.isEmpty() ? 0 : this.batch.get(this.batch.size() - 1).timestamp().toEpochMilli();
			return new TagOffset(timestamp, this.persistenceId, this.coveredTo);
		}
		if (handledInBatch == 0) {
			return new TagOffset(0, this.persistenceId, this.beforeBatch);
		}
		PersistentEvent<String> last = this.batch.get(handledInBatch - 1);
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
