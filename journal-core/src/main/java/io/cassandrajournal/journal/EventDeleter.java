package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.JournalStatements;

/**
 * The delete path of {@link io.cassandrajournal.journal.CassandraJournal}: {@code deleteTo}, bounded by the
 * stored head, without blocking the caller.
 * <ol>
 * <li>Read the head (with its claim time) and the last {@linkplain DeletionMarks deletion mark}
 * (asynchronously). The range deleted is {@code (mark, min(toSequenceNr, head)]}: nothing above the head is
 * stored, and everything up to the mark was deleted by an earlier, completed call. So
 * {@code deleteTo(id, Long.MAX_VALUE)} touches only the partitions that hold events.</li>
 * <li>Partition after partition: with the tag index on, read the rows' keys and tags ({@code sequence_nr,
 * timestamp, tags}, no payload, page by page) and delete their tag index rows ({@link TagIndexDeletes}).</li>
 * <li>Once the whole range is settled (its end too, which may wait; see below), delete the events, partition by
 * partition (the whole partition when it lies entirely in the range, else {@code sequence_nr <= upper}).</li>
 * <li>Record the new deletion mark.</li>
 * </ol>
 * Tag rows go before their events, so a failure part-way leaves events that replay still returns and that a
 * retry of the same call finds and deletes, never tag rows pointing at deleted events (which no retry could
 * find again: the event row is the only place that says which tag rows an event has). The mark goes last, so
 * it never claims a deletion that did not finish.
 * <p>
 * <b>Only a settled range is deleted</b> (with the tag index on). A number in the range that is claimed and not
 * yet visible may be another writer's append whose batch is still on its way; its tag rows could not be found
 * once its events are deleted. So the tag-row read checks the numbers it passes: a missing one is waited for
 * while it is in flight ({@link HoleWait}, the rule replays apply: claimed less than {@code in-flight-wait}
 * before the read that shows it missing started), re-reading from it with a short backoff, and stepped over as a
 * crash gap after that. The read's start, not its answer, counts: an append acknowledged just inside its writer's
 * deadline may land while a slow read is on its way (finding 15, item 6). Each round after a wait reads the head
 * again: a hole at the end is judged by the claim time of the claim that holds it then (its numbers may have been
 * released and claimed again while the call waited), the range shrinks to a head that went down, and the hole is
 * stepped over only once a serial read shows that same claim (finding 21, items 1 and 3; the serial read is skipped
 * when claims are not lightweight transactions, and a head it shows lower shrinks the range too). Once the head has
 * moved above the range, the hole at its end is judged by the first visible event above it instead (claimed after
 * it, and no longer releasable), not by the head, whose claim time a busy writer renews every round. No event is
 * deleted before every number of the range is visible or stepped over, the end's too: events deleted while the
 * call still waits at the end, with the mark not written yet, are a hole below older events and no mark above it,
 * which a replay meeting them in that time seals and reports as a crash gap (docs/reliability.md, finding 23,
 * R2's open lows). What is left of that window is the deletes themselves and the mark's write, no wait. A settled
 * range costs nothing more: the same reads, no wait. A batch that lands after its numbers were stepped over (later
 * than {@code in-flight-wait} after its claim) is shadowed in {@code events} by the range deletion (an append's
 * rows carry the write time taken before its claim, with client-side time stamps and clocks that agree within the
 * time from claim to delete), but its tag rows stay: the residual window of docs/reliability.md, finding 7.
 * <p>
 * <b>Without the tag index</b> there are no tag rows to find, and a late batch's events are shadowed the same way;
 * what still matters is the mark. Replays take the numbers under it that no event shows as deleted, at once
 * (finding 19), so the mark must not cover a claim that can still be released and taken again: a claim in flight
 * when the head was read, whose batch then fails and whose writer releases it, gives its numbers to the next
 * append, whose events land after the range deletion and would be skipped by a replay that reads while they are
 * on their way (docs/reliability.md, finding 23, Review, item 4). Only the head's own claim can be released (a
 * release is conditional on the head being the claim's last number, and a claim with a visible event is never
 * released), and the numbers below a visible event can never be released again. So one single-row read asks
 * whether the range's last number shows an event: if it does, the range is deleted at once, as before; so it is
 * when an event above it in its partition is visible (the hole at the end is then below a visible event; with
 * client-side time stamps only, see below); if not (that claim in flight, a crash gap, or a sealed one), the call
 * reads the range's keys and waits on the hole at its end exactly as with the tag index (re-reading the head, which
 * a release lowers, so the range and the mark shrink to it), without any tag row to delete. A hole in the middle of
 * the range (below a visible event) is not waited on there: it cannot be released, a batch of it that still lands is
 * shadowed by the range deletion, and there are no tag rows to find, so it goes with the range at once, as on the
 * path for a range whose last number shows an event (finding 23, R2's open lows). That shadowing holds only when
 * the driver stamps writes on the client (its default): with time stamps left to the server (its
 * {@code ServerSideTimestampGenerator}, which the journal allows with a warning, {@code SealConditions}), a late
 * batch gets the time it reaches a replica, later than the deletion, and its events would survive under the mark.
 * So with server-side time stamps a middle hole is waited on as with the tag index, also below a visible last
 * number of the range (finding 30, item 1: that shortcut deleted at once), and a hole at the end below a
 * visible event above the range too, as before (finding 23, R2's review of a91a7db, items 1 and 2; checked once,
 * when the journal is built). On either path a range that shrinks to nothing (the head released
 * down to the mark, to 0 for a new entity) ends the call without deleting anything or writing a mark: the numbers
 * are free, and the next append that takes them must keep its events.
 */
final class EventDeleter {

	private static final Logger logger = LoggerFactory.getLogger(EventDeleter.class);

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final JournalStatements statements;

	private final EventReader reader;

	private final DeletionMarks marks;

	/** Only with the tag index on. */
	private final @Nullable TagIndexDeletes tagIndex;

	/** The range's keys (with their tags when the tag index is on), read by {@link Run}. */
	private final PreparedStatement selectTagged;

	/**
	 * Whether the driver stamps writes on the client: only then does a range deletion shadow a batch that lands
	 * after it, so that, without the tag index, a hole below a visible event needs no wait.
	 */
	private final boolean clientSideTimestamps;

	public EventDeleter(CqlSession session, CassandraJournalOptions options, JournalStatements statements,
			EventReader reader, DeletionMarks marks) {
		this.session = session;
		this.options = options;
		this.statements = statements;
		this.reader = reader;
		this.marks = marks;
		// Without the tag index only the keys are read (a range whose last number shows no event; see above).
		this.tagIndex = options.useTagIndex() ? new TagIndexDeletes(session, options) : null;
		this.selectTagged = new JournalStatements.Statements(session, options)
			.read("SELECT sequence_nr, timestamp" + (options.useTagIndex() ? ", tags" : "") + " FROM "
					+ options.requireKeyspace() + "." + options.eventsTable()
					+ " WHERE persistence_id = ? AND partition_nr = ? AND sequence_nr >= ? AND sequence_nr <= ?");
		this.clientSideTimestamps = session.getContext().getTimestampGenerator().next() != Statement.NO_DEFAULT_TIMESTAMP;
	}

	/**
	 * @param persistenceId the entity
	 * @param toSequenceNr the last sequence number to delete; anything above the head is ignored
	 * @return completes when the events and their tag index rows are deleted and the mark is recorded; with the
	 * tag index on, after the numbers of the range claimed within {@code in-flight-wait} have appeared (or become
	 * crash gaps, or been released); without it, when the range's last number shows no event, after the hole at the
	 * range's end has (with client-side time stamps, a hole below a visible event is deleted without a wait; with
	 * server-side ones, every hole of the range is waited on as with the tag index)
	 */
	public CompletionStage<Void> deleteTo(String persistenceId, long toSequenceNr) {
		CompletableFuture<EventReader.Head> head = this.reader.headWithClaimTime(persistenceId).toCompletableFuture();
		CompletableFuture<Long> deleted = this.marks.deletedTo(persistenceId).toCompletableFuture();
		return head.thenCombine(deleted, (h, d) -> new Range(Math.min(toSequenceNr, h.sequenceNr()), d, h))
			.thenCompose((range) -> {
				long upper = range.upper();
				if (upper <= range.alreadyDeleted()) {
					return CompletableFuture.completedFuture(null);
				}
				CompletionStage<Long> deletes = (this.tagIndex != null)
						? new Run(this.tagIndex, persistenceId, range).first()
						: withoutTagIndex(persistenceId, range);
				// A range that shrank to nothing (the head released down to the mark while the call waited): no mark.
				return deletes.thenCompose((deletedTo) -> (deletedTo <= range.alreadyDeleted())
						? CompletableFuture.completedFuture(null) : this.marks.mark(persistenceId, deletedTo));
			});
	}

	/** The range {@code (alreadyDeleted, upper]}, and the head it was bounded by. */
	private record Range(long upper, long alreadyDeleted, EventReader.Head head) {
	}

	/**
	 * Without the tag index, with client-side time stamps: the range at once when its last number shows an event
	 * (nothing in it can be released and claimed again) or an event above it in its partition does (a hole at
	 * the end is then below a visible event: never released, and a batch of it that lands later is shadowed; R2's
	 * review of a91a7db, item 2); else read and waited on as with the tag index ({@link Run}, no tag rows), so the
	 * mark never covers a claim that may still be released (finding 23, Review, item 4). With server-side time stamps
	 * always read and waited on, so that a middle hole's late batch cannot land after the deletion (finding 30).
	 * @return completes with the last number deleted
	 */
	private CompletionStage<Long> withoutTagIndex(String persistenceId, Range range) {
		long upper = range.upper();
		// The first visible event at or above upper in upper's partition, Long.MAX_VALUE if none.
		// With server-side time stamps never at once, also when the last number shows an event: a middle hole's late
		// batch would land after the deletion and survive it (finding 30, item 1).
		return this.reader.firstAbove(persistenceId, upper - 1, upper).thenCompose((first) -> (this.clientSideTimestamps
				&& first != Long.MAX_VALUE)
				? deleteEventsOnly(persistenceId, this.reader.partitionOf(range.alreadyDeleted() + 1),
						this.reader.partitionOf(upper), upper).thenApply((ignored) -> upper)
				: new Run(null, persistenceId, range).first());
	}

	private CompletionStage<Void> deleteEventsOnly(String persistenceId, long partition, long lastPartition, long upper) {
		CompletionStage<Void> current = deleteEvents(persistenceId, partition, lastPartition, upper);
		return (partition == lastPartition) ? current
				: current.thenCompose((ignored) -> deleteEventsOnly(persistenceId, partition + 1, lastPartition, upper));
	}

	private CompletionStage<Void> deleteEvents(String persistenceId, long partition, long lastPartition, long upper) {
		boolean whole = partition < lastPartition || upper % this.options.partitionSize() == 0;
		return this.session
			.executeAsync(whole ? this.statements.deletePartition.bind(persistenceId, partition)
					: this.statements.deleteRange.bind(persistenceId, partition, upper))
			.thenApply((ignored) -> null);
	}

	/**
	 * One call with the tag index on (or without it, when the range's last number shows no event and, with
	 * client-side time stamps, no event above it in its partition does): reads from
	 * {@link #next} (the first number not yet settled) partition by partition, deleting each page's tag rows (if
	 * any), and the events of the whole range once {@link #next} has passed its end. Only one stage of it runs at a
	 * time.
	 */
	private final class Run {

		/** Null without the tag index: keys only, no tag rows to delete. */
		private final @Nullable TagIndexDeletes index;

		private final String persistenceId;

		/**
		 * The last number deleted: the call's bound, shrunk to the head each round (a released claim), never raised,
		 * so a busy entity cannot keep the call here.
		 */
		private long upper;

		private long lastPartition;

		/** The claim time of the head this round read: no number up to it was claimed later. */
		private long headClaimedAt;

		/** The head this round read: every number of the range was claimed before this round's reads. */
		private long head;

		private final HoleWait holes = new HoleWait(EventDeleter.this.options);

		/** When the current round's read started: a hole is judged then, not when the answer arrived. */
		private HoleWait.ReadStart readStart;

		/**
		 * Every number below it is visible (its tag rows found), stepped over as a crash gap, or (without the tag
		 * index, with client-side time stamps) a middle hole below a visible event.
		 */
		private long next;

		/** The mark this call started from: {@link #upper} never goes below it. */
		private final long alreadyDeleted;

		Run(@Nullable TagIndexDeletes index, String persistenceId, Range range) {
			this.index = index;
			this.persistenceId = persistenceId;
			this.upper = range.upper();
			this.lastPartition = EventDeleter.this.reader.partitionOf(this.upper);
			this.headClaimedAt = range.head().claimedAt();
			this.head = range.head().sequenceNr();
			this.readStart = this.holes.readStart();
			this.alreadyDeleted = range.alreadyDeleted();
			this.next = range.alreadyDeleted() + 1;
		}

		/** @return the first round, on the head {@code deleteTo} read; completes with the last number deleted */
		CompletionStage<Long> first() {
			return start().thenApply((ignored) -> this.upper);
		}

		private CompletionStage<Void> start() {
			// Before the read: a decision must rest on a read that started after the wait expired (finding 15, item 6).
			this.readStart = this.holes.readStart();
			return read(EventDeleter.this.reader.partitionOf(this.next));
		}

		/**
		 * A round after a wait: reads the head again first, so an end hole is judged by the claim time of the claim
		 * that holds it now (the numbers may have been released and claimed again by another writer while this call
		 * waited; finding 21, item 3), and the range shrinks to a head that went down.
		 */
		private CompletionStage<Void> again() {
			this.readStart = this.holes.readStart();
			return EventDeleter.this.reader.headWithClaimTime(this.persistenceId).thenCompose((head) -> {
				this.head = head.sequenceNr();
				this.headClaimedAt = head.claimedAt();
				this.upper = Math.max(Math.min(this.upper, this.head), this.next - 1);
				this.lastPartition = EventDeleter.this.reader.partitionOf(this.upper);
				if (this.next > this.upper) {
					return deleteSettledEvents();
				}
				return read(EventDeleter.this.reader.partitionOf(this.next));
			});
		}

		/**
		 * A hole in the middle of the range, below a visible event. With the tag index it is waited on while in flight
		 * (its tag rows must be found). Without it, and with client-side time stamps, it is deleted with the range at
		 * once: numbers below a visible event can never be released and claimed again (the mark may cover them), and a
		 * batch of theirs that still lands carries a write time taken before its claim, so the range deletion shadows
		 * it. With server-side time stamps such a batch would carry the time it lands and survive the deletion, so the
		 * hole is waited on as with the tag index (R2's review of a91a7db, item 1).
		 * @param to the last missing number of the hole at {@link #next}
		 * @param claimedAt no earlier than their claim
		 * @return whether the hole is settled (then stepped over); false while it is in flight
		 */
		private boolean settle(long to, long claimedAt) {
			if (this.index == null && EventDeleter.this.clientSideTimestamps) {
				logger.debug("deleteTo of '{}': sequence numbers {}..{} show no event below event {}; deleted with the "
						+ "range without a wait (no tag index rows to find; a batch of theirs that lands later is "
						+ "shadowed by the range deletion)", this.persistenceId, this.next, to, to + 1);
				this.next = to + 1;
				return true;
			}
			if (this.holes.settledUpTo(this.next, claimedAt, this.head, this.readStart) < to) {
				return false;
			}
			stepOver(to);
			return true;
		}

		/** Reads one partition from {@link #next}, then goes on with the next partition, waits, or finishes. */
		private CompletionStage<Void> read(long partition) {
			return page(EventDeleter.this.session
				.executeAsync(EventDeleter.this.selectTagged.bind(this.persistenceId, partition, this.next, this.upper)))
				.thenCompose((stopped) -> {
					if (stopped) {
						return this.holes.later(this::again);
					}
					if (partition < this.lastPartition) {
						// Its events stay until the whole range is settled (see deleteSettledEvents).
						return read(partition + 1);
					}
					if (this.next <= this.upper) {
						return endHole();
					}
					return deleteSettledEvents();
				});
		}

		/**
		 * A hole at the end of the range ({@link #next}..{@link #upper}), judged by a claim time no earlier than its
		 * claim: the head's when the head is the range's end; when the head moved above it, the time stamp of the
		 * first visible event above the range (claimed after the hole, {@link EventReader#firstStampAbove}). The
		 * head's claim time alone would not do there: a writer appending more often than {@code in-flight-wait}
		 * renews it every round, and the call would wait for as long as it appends. With no event visible above, the
		 * head's claim time it is.
		 */
		private CompletionStage<Void> endHole() {
			if (this.head <= this.upper) {
				return judgeEndHole(this.headClaimedAt, true);
			}
			return EventDeleter.this.reader.firstStampAbove(this.persistenceId, this.upper, this.head)
				.thenCompose((above) -> judgeEndHole(Math.min(this.headClaimedAt, above), above == Long.MAX_VALUE));
		}

		/**
		 * @param claimedAt no earlier than the hole's claim
		 * @param byTheHead whether it is the head's claim time (no visible event above the hole: its claim may be
		 * the head's, which a release may still take back; a hole below a visible event cannot be released)
		 */
		private CompletionStage<Void> judgeEndHole(long claimedAt, boolean byTheHead) {
			if (this.holes.settledUpTo(this.next, claimedAt, this.head, this.readStart) < this.upper) {
				return this.holes.later(this::again);
			}
			if (!byTheHead || !EventDeleter.this.reader.claimsArePaxosRounds()) {
				stepOver(this.upper);
				return deleteSettledEvents();
			}
			return stillTheHead().thenCompose((same) -> {
				if (!same) {
					return this.holes.later(this::again);
				}
				stepOver(this.upper);
				return deleteSettledEvents();
			});
		}

		/**
		 * Before stepping over a hole at the end judged by the head's claim: a serial read of the head, which
		 * completes a release a quorum accepted and whose commit timed out (finding 21, item 1). The hole is stepped
		 * over only if the head is still the claim this round judged; otherwise the range shrinks to the head the
		 * serial read shows (a completed release lowers it; a plain read at the journal's consistency may not show
		 * that yet) and the round runs again.
		 * @return whether the head and its claim time are the ones this round read
		 */
		private CompletionStage<Boolean> stillTheHead() {
			long head = this.head;
			long claimedAt = this.headClaimedAt;
			return EventDeleter.this.reader.serialHeadWithClaimTime(this.persistenceId).thenApply((serial) -> {
				if (serial.sequenceNr() == head && serial.claimedAt() == claimedAt) {
					return true;
				}
				this.upper = Math.max(Math.min(this.upper, serial.sequenceNr()), this.next - 1);
				this.lastPartition = EventDeleter.this.reader.partitionOf(this.upper);
				return false;
			});
		}

		/**
		 * Deletes the tag rows of one page, then goes on with the next page.
		 * @return whether reading stopped at a missing number that is still in flight
		 */
		private CompletionStage<Boolean> page(CompletionStage<AsyncResultSet> read) {
			return read.thenCompose((rs) -> {
				List<TagIndexDeletes.Key> keys = new ArrayList<>();
				boolean stopped = false;
				for (Row row : rs.currentPage()) {
					long sequenceNr = row.getLong("sequence_nr");
					long timestamp = row.getLong("timestamp");
					if (sequenceNr > this.next) {
						// Missing in the middle: claimed no later than this event, stamped at its claim.
						if (!settle(sequenceNr - 1, timestamp)) {
							stopped = true;
							break;
						}
					}
					if (this.index != null) {
						for (String tag : row.getSet("tags", String.class)) {
							keys.add(new TagIndexDeletes.Key(tag, timestamp, this.persistenceId, sequenceNr));
						}
					}
					this.next = sequenceNr + 1;
				}
				boolean stop = stopped;
				TagIndexDeletes index = this.index;
				CompletionStage<Void> deleted = (keys.isEmpty() || index == null) ? CompletableFuture.completedFuture(null)
						: index.delete(keys);
				return deleted.thenCompose((ignored) -> (!stop && rs.hasMorePages()) ? page(rs.fetchNextPage())
						: CompletableFuture.completedFuture(stop));
			});
		}

		/**
		 * Deletes the events of the range, partition by partition, once {@link #next} has passed its end; the mark
		 * follows at once. Not earlier, partition by partition as the reading passes them: while the call waits at
		 * the range's end, events deleted under no mark are a hole below older events to a replay, which seals it and
		 * reports a crash gap (docs/reliability.md, finding 23, R2's open lows). Nothing when the range shrank to nothing: a
		 * released claim that brought the head down to the mark (to 0 for a new entity, whose "partition"
		 * {@code partitionOf(0)} is 0, not -1, and whose end 0 looks like a whole partition) would otherwise delete the
		 * events of the append that took the numbers again.
		 */
		private CompletionStage<Void> deleteSettledEvents() {
			if (this.upper <= this.alreadyDeleted) {
				return CompletableFuture.completedFuture(null);
			}
			return deleteEventsOnly(this.persistenceId, EventDeleter.this.reader.partitionOf(this.alreadyDeleted + 1),
					this.lastPartition, this.upper);
		}

		private void stepOver(long to) {
			logger.warn("deleteTo of '{}': sequence numbers {}..{} are claimed but have no event after the in-flight "
					+ "wait of {}; deleted as a crash gap (if their batch still lands, its events stay deleted{})",
					this.persistenceId, this.next, to, EventDeleter.this.options.inFlightWait(),
					(this.index != null) ? " but its tag index rows stay: docs/reliability.md, finding 7" : "");
			this.next = to + 1;
		}

	}

}
