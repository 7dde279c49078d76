package io.cassandrajournal.projection;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
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
 * (a batch replayed from Cassandra's batch log after a restart) would otherwise never be delivered. A crash gap
 * stepped over below a visible event is kept in {@link SteppedOverGaps} and read again on every poll for the
 * projection's {@link ProjectionSettings#crashGapRecheckWindow()}: an event that appears there is delivered late,
 * ahead of the page, after later events of its entity (at-least-once holds, per-entity order does not for it).
 */
final class PersistenceIdSource implements ProjectionSource {

	private static final Logger logger = LoggerFactory.getLogger(PersistenceIdSource.class);

	private final Journal journal;

	private final String persistenceId;

	private final int pageSize;

	private final SteppedOverGaps gaps;

	private final Clock clock;

	private long nextSequenceNr;

	/** Events found in stepped-over gaps by the last poll: the batch's first events. */
	private List<PersistentEvent<String>> late = List.of();

	/** The last poll's events from the cursor on, after {@link #late}. */
	private List<PersistentEvent<String>> batch = List.of();

	private long beforeBatch;

	/** Every sequence number up to it was delivered in a batch or stepped over as a crash gap. */
	private long coveredTo;

	/** With the default window and its own memory of stepped-over gaps (tests). */
	PersistenceIdSource(Journal journal, String persistenceId, TagOffset start, int pageSize) {
		this(journal, persistenceId, start, pageSize, new SteppedOverGaps(persistenceId,
				ProjectionSettings.defaults().crashGapRecheckWindow(), Clock.systemUTC()), Clock.systemUTC());
	}

	/**
	 * @param journal the journal
	 * @param persistenceId the entity
	 * @param start the stored cursor
	 * @param pageSize events per page
	 * @param gaps the projection's stepped-over gaps, shared by the sources its runner creates
	 * @param clock the clock for gaps whose claim time no visible event bounds
	 */
	PersistenceIdSource(Journal journal, String persistenceId, TagOffset start, int pageSize, SteppedOverGaps gaps,
			Clock clock) {
		this.journal = journal;
		this.persistenceId = persistenceId;
		this.pageSize = pageSize;
		this.gaps = gaps;
		this.clock = clock;
		this.nextSequenceNr = start.sequenceNr() + 1;
		this.beforeBatch = start.sequenceNr();
		this.coveredTo = start.sequenceNr();
	}

	@Override
	public CompletionStage<Batch> poll() {
		long from = this.nextSequenceNr;
		long to = from + this.pageSize - 1;
		return readAgain(this.gaps.due(from)).thenCompose((late) -> {
			List<PersistentEvent<String>> events = new ArrayList<>();
			return this.journal.replayContiguousRaw(this.persistenceId, from, to, events::add).thenApply((replayed) -> {
				this.beforeBatch = from - 1;
				this.late = late;
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
				keep(replayed.crashGaps(), events, covered);
				this.coveredTo = covered;
				this.nextSequenceNr = this.coveredTo + 1;
				if (late.isEmpty()) {
					return new Batch(events, caughtUp);
				}
				List<PersistentEvent<String>> all = new ArrayList<>(late.size() + events.size());
				all.addAll(late);
				all.addAll(events);
				return new Batch(all, caughtUp);
			});
		});
	}

	/** Reads the kept gaps below the cursor again, one range after the other. */
	private CompletionStage<List<PersistentEvent<String>>> readAgain(List<SequenceRange> due) {
		if (due.isEmpty()) {
			return CompletableFuture.completedFuture(List.of());
		}
		List<PersistentEvent<String>> found = new ArrayList<>();
		CompletionStage<Long> reads = CompletableFuture.completedFuture(0L);
		for (SequenceRange range : due) {
			reads = reads.thenCompose(
					(ignored) -> this.journal.replayRaw(this.persistenceId, range.from(), range.to(), found::add));
		}
		return reads.thenApply((ignored) -> {
			if (!found.isEmpty()) {
				logger.warn("Events {} of '{}' appeared after this projection stepped over their numbers as a crash gap "
						+ "(a batch written long after its claim, such as one Cassandra replays from its batch log "
						+ "after a restart): delivered now, after later events of the entity", found.stream()
							.map(PersistentEvent::sequenceNr)
							.toList(), this.persistenceId);
			}
			return found;
		});
	}

	/** Keeps the crash gaps this poll stepped over (not a held end) for reading again. */
	private void keep(List<SequenceRange> crashGaps, List<PersistentEvent<String>> events, long covered) {
		for (SequenceRange gap : crashGaps) {
			if (gap.to() > covered) {
				continue;
			}
			// Claims move the head in order: the gap was claimed no later than the next visible event.
			long claimedBy = this.clock.millis();
			for (PersistentEvent<String> event : events) {
				if (event.sequenceNr() > gap.to()) {
					claimedBy = event.timestamp().toEpochMilli();
					break;
				}
			}
			this.gaps.add(gap, claimedBy);
		}
	}

	@Override
	public TagOffset offsetAfter(int handledInBatch) {
		int lateHandled = Math.min(handledInBatch, this.late.size());
		for (int i = 0; i < lateHandled; i++) {
			this.gaps.delivered(this.late.get(i).sequenceNr());
		}
		// Late events lie below the cursor: they never move it.
		int handled = (handledInBatch == Integer.MAX_VALUE) ? handledInBatch : handledInBatch - this.late.size();
		if (!this.gaps.isEmpty()) {
			// A source created after a failed batch reads a kept gap's numbers in order: they are delivered.
			for (int i = 0; i < Math.min(handled, this.batch.size()); i++) {
				this.gaps.delivered(this.batch.get(i).sequenceNr());
			}
		}
		if (handled >= this.batch.size()) {
			// The whole batch, and any crash gap stepped over with it.
			long timestamp = this.batch.isEmpty() ? 0 : this.batch.get(this.batch.size() - 1).timestamp().toEpochMilli();
			return new TagOffset(timestamp, this.persistenceId, this.coveredTo);
		}
		if (handled <= 0) {
			return new TagOffset(0, this.persistenceId, this.beforeBatch);
		}
		PersistentEvent<String> last = this.batch.get(handled - 1);
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
