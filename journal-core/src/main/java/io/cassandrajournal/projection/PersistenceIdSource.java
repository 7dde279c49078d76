package io.cassandrajournal.projection;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.journal.ReplayResult;
import io.cassandrajournal.query.TagOffset;

/**
 * A by-persistenceId projection's source: pages of the entity's stream after the last handled sequence
 * number, read with {@link Journal#replayContiguousRawHoldingEnd}: an event is never delivered before the sequence
 * numbers below it are visible or declared a crash gap (claimed, and still missing after the journal's
 * in-flight wait), so a late batch of another writer is never stepped over. Offsets are exact per event; a
 * crash gap at the end of a page moves the offset past it, except at the end of the stream: numbers claimed
 * above the last visible event are held and read again on every poll, since an event that appears there later
 * (a batch replayed from Cassandra's batch log after a restart) would otherwise never be delivered. A crash gap
 * stepped over below a visible event is kept in {@link SteppedOverGaps} and read again (at most every
 * {@link SteppedOverGaps#RECHECK_INTERVAL}, one read for gaps close together) for the projection's
 * {@link ProjectionSettings#crashGapRecheckWindow()}: an event that appears there is delivered late, ahead of the
 * page, after later events of its entity (at-least-once holds, per-entity order does not for it). A gap the
 * journal sealed ({@link ReplayResult#crashGapsSealed()}, docs/reliability.md finding 13) is stepped over at the
 * end of the stream too: its seal shadows any batch of its claim as long as the writers' clocks agree to within
 * the in-flight wait, and the rate-limited re-read of kept gaps stays the second line of defence for a writer
 * whose clock ran ahead. Numbers the journal reports deleted ({@link ReplayResult#deleted()}: the cursor was behind a
 * {@code deleteTo}) are stepped over at once and reported ({@link #deleted()}; docs/reliability.md, finding 19).
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

	/** Every sequence number up to it was delivered in a batch, stepped over as a crash gap or is deleted. */
	private long coveredTo;

	/** The latest deleted range a replay reported, if any. */
	private ProjectionStatus.@Nullable DeletedEvents deleted;

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
			// It holds an unsealed end (below): the journal need not make stepping over one safe.
			return this.journal.replayContiguousRawHoldingEnd(this.persistenceId, from, to, events::add)
				.thenApply((replayed) -> {
				this.beforeBatch = from - 1;
				this.late = late;
				this.batch = events;
				long covered = Math.max(from - 1, replayed.coveredTo());
				SequenceRange deletedRange = replayed.deleted();
				if (deletedRange != null) {
					// Deleted, not in flight: stepped over up to the mark, which may lie beyond this page.
					covered = Math.max(covered, Math.min(deletedRange.to(), replayed.head()));
					this.deleted = ProjectionStatus.DeletedEvents.byPersistenceId(this.persistenceId, deletedRange);
				}
				long delivered = events.isEmpty() ? from - 1 : events.get(events.size() - 1).sequenceNr();
				boolean caughtUp = covered >= replayed.head();
				if (caughtUp && covered > delivered && !replayed.crashGapsSealed()) {
					// Claimed numbers missing at the end of the stream, not sealed: nothing waits behind them, so they
					// are held and read again on every poll, never stepped over. Their events may still appear (a logged
					// batch that Cassandra replays from its batch log after a node restart); a later append turns them
					// into a gap below a visible event, which is waited for and stepped over as usual. A sealed end is
					// stepped over and kept like any stepped-over gap: holding it would read and seal it again on every
					// poll, for a batch its seal already shadows.
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

	/**
	 * Reads the kept gaps below the cursor again: one read for ranges that lie within a page of each other, so
	 * a few gaps close together cost one read; only events inside the ranges are kept.
	 */
	private CompletionStage<List<PersistentEvent<String>>> readAgain(List<SequenceRange> due) {
		if (due.isEmpty()) {
			return CompletableFuture.completedFuture(List.of());
		}
		List<PersistentEvent<String>> found = new ArrayList<>();
		CompletionStage<Long> reads = CompletableFuture.completedFuture(0L);
		int first = 0;
		while (first < due.size()) {
			int last = first;
			while (last + 1 < due.size() && due.get(last + 1).to() - due.get(first).from() < this.pageSize) {
				last++;
			}
			List<SequenceRange> group = due.subList(first, last + 1);
			reads = reads.thenCompose((ignored) -> this.journal.replayRaw(this.persistenceId, group.get(0).from(),
					group.get(group.size() - 1).to(), (event) -> {
						if (within(group, event.sequenceNr())) {
							found.add(event);
						}
					}));
			first = last + 1;
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

	private static boolean within(List<SequenceRange> ranges, long sequenceNr) {
		for (SequenceRange range : ranges) {
			if (range.from() <= sequenceNr && sequenceNr <= range.to()) {
				return true;
			}
		}
		return false;
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

	@Override
	public ProjectionStatus.@Nullable DeletedEvents deleted() {
		return this.deleted;
	}

}
