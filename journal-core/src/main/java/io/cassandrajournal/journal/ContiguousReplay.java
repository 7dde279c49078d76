package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.RowValues;
import io.cassandrajournal.internal.Seal;
import io.cassandrajournal.internal.SealConditions;
import io.cassandrajournal.internal.WarnOnce;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;

/**
 * The one mechanism for "claimed but not yet visible" (entity loads and entity projections both use it, through
 * {@link io.cassandrajournal.journal.Journal#replayContiguous}): a replay that delivers events in order and, at
 * the first missing sequence number up to the head, waits for it while its claim is younger than
 * {@link CassandraJournalOptions#inFlightWait()}, then steps over what is still missing as a crash gap.
 * <p>
 * When was a missing number claimed? Claims move the head in order, so a missing number was claimed no later
 * than the next visible event (whose time stamp is its claim's) or, at the end, than the head's
 * {@code updated_at}. Both come from the writers' clocks: the wait assumes they agree with ours to well within
 * the bound; a second, local bound (the same length, from when this replay first met the hole) keeps a writer
 * whose clock runs ahead from stalling reads for longer ({@link HoleWait}, which {@code deleteTo} applies too).
 * Waiting is re-reading from the missing number with a doubling backoff (10 ms to 200 ms) on
 * {@link CompletableFuture#delayedExecutor}; no thread blocks.
 * <p>
 * <b>A stepped-over gap is sealed</b> (docs/reliability.md, finding 13): a logged batch can still land after the
 * wait (Cassandra's batch log replays it once its replicas are back), and an entity decided on the state without
 * it. So before stepping over, the replay writes a range deletion of the missing numbers in the events table, one
 * per partition, with a write time of at least the claim's time stamp plus {@code in-flight-wait} (and at least
 * the driver's now): an append's rows carry a write time taken before its claim, so a batch that lands later is
 * shadowed and every reader keeps seeing the gap. The decision rests on a read that started after the wait
 * expired ({@link HoleWait#settledUpTo}); the writer reports a batch that completes later than that as uncertain
 * ({@link AppendWriter}), so no acknowledged event is sealed. A seal that fails fails the replay, as a failed
 * read does: nothing is stepped over unsealed. A gap at the end (the head's own numbers) is sealed only once a serial
 * read of the head still shows the claim it was judged by: a release of that claim whose commit timed out would
 * otherwise be completed by the next claim, which takes the numbers again after the seal (finding 21, item 1; the
 * serial read is skipped when claims are not lightweight transactions, and a lower head it shows shrinks the range).
 * A gap at the end of the range below a head that moved on is judged and sealed by the first visible event above
 * it, as a gap in the middle is, not by the head's claim time, which a busy writer renews every round. With
 * an {@code in-flight-wait} of zero nothing waits and nothing
 * is sealed (the behaviour of plain replays). With seals off (that, or {@link SealConditions} unsafe) a gap at the end
 * is still stepped over only after the serial read of the head, unsealed (finding 21, item 7), except for a caller
 * that holds such a gap and never moves past it ({@code holdsUnsealedEnd}: a by-persistenceId projection), which
 * the read would only cost a Paxos round per poll (review of finding 21, items 4-7). A gap this journal
 * sealed before is stepped over without writing its seal again (the seal's bounded memo, {@link Seal#sealedBefore}).
 * <p>
 * <b>A deleted range is not a hole</b> (docs/reliability.md, finding 19): at the first missing number it meets, a
 * replay reads the entity's {@linkplain DeletionMarks deletion mark} (once per replay; a replay without a missing
 * number reads nothing more) and skips the numbers from its first up to the mark at once (no wait, no seal),
 * reporting them as {@link ReplayResult#deleted()}; then it reads again from after them. Numbers a {@code deleteTo}
 * still in progress has deleted (its mark is written last) are still taken for a hole; every hole is checked against
 * the mark once more before it is sealed (a {@code deleteTo} may have completed since the first read, during a wait
 * or not).
 * <p>
 * <b>The mark is not proof that every number under it is gone</b> (docs/reliability.md, finding 23): an event can
 * be visible below it (a {@code deleteTo} that read the head once while a claim was released and taken again, or a
 * writer whose clock runs ahead of the deleter's). Such an event is delivered, with a warning; only the numbers
 * under the mark that no event shows are skipped as deleted, never past a visible event, also beyond the replay's
 * range (one more single-row read when the mark reaches past it).
 */
final class ContiguousReplay {

	private static final Logger logger = LoggerFactory.getLogger(ContiguousReplay.class);

	private final CassandraJournalOptions options;

	private final EventReader reader;

	/** deleteTo's marks: numbers up to an entity's mark are deleted, not in flight. */
	private final DeletionMarks marks;

	private final WarnOnce gapWarnings = new WarnOnce(10_000);

	/** Events met visible below deleteTo's mark (finding 23): logged once each. */
	private final WarnOnce markWarnings = new WarnOnce(10_000);

	/**
	 * The seal of a stepped-over gap, with its memo of gaps sealed before; null with seals off: an in-flight wait of
	 * zero, or a setup {@link SealConditions} finds unsafe.
	 */
	private final @Nullable Seal seal;

	public ContiguousReplay(CqlSession session, CassandraJournalOptions options, EventReader reader,
			DeletionMarks marks) {
		this.options = options;
		this.reader = reader;
		this.marks = marks;
		String unsafe = options.inFlightWait().isZero() ? null : SealConditions.unsafe(session, options);
		if (unsafe != null) {
			logger.warn("Crash gaps are stepped over after the in-flight wait of {} but not sealed: {}. A logged batch "
					+ "that lands later (from the batch log) can still appear behind a reader that stepped over it "
					+ "(docs/reliability.md, finding 13; README, Guarantees)", options.inFlightWait(), unsafe);
		}
		this.seal = (options.inFlightWait().isZero() || unsafe != null) ? null : new Seal(session, options);
	}

	/**
	 * @param type the payload type, or {@code null} for the stored JSON text
	 * @param holdsUnsealedEnd whether the caller never moves past crash gaps at the end of the stream that are not
	 * sealed (it holds them and reads them again): with seals off, such a gap is then stepped over in the result
	 * without the serial read of the head that makes moving past it safe
	 */
	public <E> CompletionStage<ReplayResult> replay(String persistenceId, long from, long to, @Nullable Class<E> type,
			boolean holdsUnsealedEnd, Consumer<? super PersistentEvent<E>> consumer) {
		return new Run<>(persistenceId, from, to, type, holdsUnsealedEnd, consumer).round();
	}

	/** One call's state: only one stage of it runs at a time. */
	private final class Run<E> {

		private final String persistenceId;

		private final @Nullable Class<E> type;

		private final Consumer<? super PersistentEvent<E>> consumer;

		/** Whether the caller holds unsealed gaps at the end: no serial read before stepping over one unsealed. */
		private final boolean holdsUnsealedEnd;

		private final List<SequenceRange> crashGaps = new ArrayList<>();

		/** Fixed by the first head read; only shrinks (a released claim), so a busy entity cannot keep us here. */
		private long upper;

		private long head;

		private long next;

		private long last;

		private final HoleWait holes = new HoleWait(ContiguousReplay.this.options);

		/** When the current round's reads started. */
		private HoleWait.ReadStart readStart;

		/** Whether a crash gap was stepped over without a final seal (so it may still show an event). */
		private boolean unsealed;

		/** Missing numbers decided as a crash gap, to be sealed before they are stepped over. */
		private @Nullable SequenceRange toSeal;

		/** No earlier than the claim of {@link #toSeal}'s numbers. */
		private long sealClaimedAt;

		/**
		 * Whether {@link #toSeal} is missing at the end (up to the head this round read, whose claim time is
		 * {@link #sealClaimedAt}): the head's own claim, which a release may still take back.
		 */
		private boolean sealAtEnd;

		/** The numbers from the first up to deleteTo's mark, skipped as deleted; null if none. */
		private @Nullable SequenceRange deleted;

		/** Whether deleteTo's mark was read (at the first missing number met; finding 19). */
		private boolean markRead;

		/** Whether reading stopped at a missing number to read the mark first. */
		private boolean markNeeded;

		/** deleteTo's mark once read ({@link #markRead}); numbers up to it that no event shows are deleted. */
		private long mark;

		/** The visible event reading stopped at to read the mark ({@link #markNeeded}); MAX_VALUE if none. */
		private long stoppedAt = Long.MAX_VALUE;

		Run(String persistenceId, long from, long to, @Nullable Class<E> type, boolean holdsUnsealedEnd,
				Consumer<? super PersistentEvent<E>> consumer) {
			this.persistenceId = persistenceId;
			this.type = type;
			this.holdsUnsealedEnd = holdsUnsealedEnd;
			this.consumer = consumer;
			this.next = from;
			this.upper = to;
			this.readStart = this.holes.readStart();
		}

		CompletionStage<ReplayResult> round() {
			// Before the head read: the partition reads start later still, so this bounds the read's start from below.
			this.readStart = this.holes.readStart();
			return ContiguousReplay.this.reader.headWithClaimTime(this.persistenceId).thenCompose((head) -> {
				this.head = head.sequenceNr();
				this.upper = Math.min(this.upper, this.head);
				if (this.next > this.upper) {
					return done();
				}
				return readPartitions(ContiguousReplay.this.reader.partitionOf(this.next)).thenCompose((stopped) -> {
					if (this.markNeeded || (this.toSeal == null && !stopped && this.next <= this.upper && !this.markRead)) {
						// A missing number: deleted by a completed deleteTo, or a hole? The mark says; then read again.
						return readMark().thenCompose((ignored) -> round());
					}
					if (this.toSeal == null && !stopped && this.next <= this.upper && this.next <= this.mark) {
						// Missing at the end below the mark, after an event that survived under it: deleted.
						return skipDeleted(Long.MAX_VALUE).thenCompose((ignored) -> round());
					}
					if (this.toSeal == null && !stopped && this.next <= this.upper) {
						return endGap(head.claimedAt());
					}
					return decided(stopped);
				});
			});
		}

		/**
		 * Missing at the end of the range ({@link #next}..{@link #upper}): claimed no later than the head's
		 * {@code updated_at} when the head is the range's end. When the head moved above it (a later round, or a
		 * range that ends below the head), no later than the first visible event above the range
		 * ({@link EventReader#firstStampAbove}), whose claim cannot be released any more, so the gap is sealed as one
		 * in the middle is; the head's claim time alone would let a writer appending more often than
		 * {@code in-flight-wait} keep the replay waiting for as long as it appends. With no event visible above, the
		 * head's claim time it is, and the gap is the head's own claim (sealed only after a serial read).
		 * @param headClaimedAt the claim time of the head this round read
		 */
		private CompletionStage<ReplayResult> endGap(long headClaimedAt) {
			CompletionStage<Long> above = (this.head <= this.upper) ? CompletableFuture.completedFuture(Long.MAX_VALUE)
					: ContiguousReplay.this.reader.firstStampAbove(this.persistenceId, this.upper, this.head);
			return above.thenCompose((stamp) -> {
				boolean stopped = !settle(this.upper, Math.min(headClaimedAt, stamp), stamp == Long.MAX_VALUE);
				return decided(stopped);
			});
		}

		/** @param stopped whether a missing number is still in flight */
		private CompletionStage<ReplayResult> decided(boolean stopped) {
			if (this.toSeal != null) {
				return markBeforeSeal();
			}
			return stopped ? later() : done();
		}

		private CompletionStage<ReplayResult> done() {
			return CompletableFuture.completedFuture(
					new ReplayResult(this.last, this.next - 1, this.head, this.crashGaps, !this.unsealed, this.deleted));
		}

		/**
		 * Reads deleteTo's mark and skips the missing numbers up to it (completed deletions only: the mark is written
		 * last): deleted, so not waited for and not sealed; reading goes on after them (or after the replay's last, if
		 * lower). Not past the event reading stopped at: one visible below the mark survived the deletion.
		 */
		private CompletionStage<Void> readMark() {
			long firstVisible = this.stoppedAt;
			return ContiguousReplay.this.marks.deletedTo(this.persistenceId).thenCompose((mark) -> {
				this.markRead = true;
				this.markNeeded = false;
				this.stoppedAt = Long.MAX_VALUE;
				this.mark = mark;
				return (mark >= this.next) ? skipDeleted(firstVisible) : CompletableFuture.completedFuture(null);
			});
		}

		/**
		 * Skips the missing numbers from {@link #next} up to the mark, but not up to a visible event: with none seen up
		 * to the range's end and a mark beyond it, the first event above the range is read (one single-row read), so
		 * the reported range, which a projection steps over in one go, does not cover an event it has not read.
		 * @param firstVisible the first visible event above {@link #next}, or MAX_VALUE if reading met none
		 */
		private CompletionStage<Void> skipDeleted(long firstVisible) {
			CompletionStage<Long> visible = (firstVisible == Long.MAX_VALUE && this.mark > this.upper)
					? ContiguousReplay.this.reader.firstAbove(this.persistenceId, this.upper, this.mark)
					: CompletableFuture.completedFuture(firstVisible);
			return visible.thenAccept(this::deletedBelow);
		}

		/**
		 * The missing numbers from {@link #next} up to the mark or up to {@code firstVisible - 1}, whichever is lower,
		 * are deleted: added to {@link #deleted} (from its first number to its last, with any event that survived in
		 * between delivered), and stepped over up to the range's end.
		 * @param firstVisible the first visible event above {@link #next}, MAX_VALUE if none
		 */
		private void deletedBelow(long firstVisible) {
			long to = Math.min(this.mark, firstVisible - 1);
			if (to < this.next) {
				return;
			}
			if (firstVisible <= this.mark && ContiguousReplay.this.markWarnings.first(this.persistenceId + "#" + firstVisible)) {
				logger.warn("Event {} of '{}' is visible below deleteTo's mark {}: not skipped as deleted (numbers {} are). "
						+ "It survived the deletion: written after it by a claim released and taken again during a "
						+ "deleteTo, or by a writer whose clock runs ahead of the deleter's (docs/reliability.md, finding 23)",
						firstVisible, this.persistenceId, this.mark, new SequenceRange(this.next, to));
			}
			this.deleted = new SequenceRange((this.deleted != null) ? this.deleted.from() : this.next, to);
			this.next = Math.min(to, this.upper) + 1;
		}

		/**
		 * A hole about to be sealed and stepped over as a crash gap: the mark read earlier in this replay may be stale,
		 * whether the replay waited on the hole (a deleteTo that completed during the wait) or not (a hole whose claim
		 * was old when it was met, after a deleteTo ran ahead of a replay that read the mark early; finding 23, Review,
		 * item 2). One more read of the mark before every seal (one single-row read per crash gap met, which are
		 * rare); if it now reaches the hole, its numbers up to the mark are deleted, not a crash gap, and the round is
		 * read again.
		 */
		private CompletionStage<ReplayResult> markBeforeSeal() {
			SequenceRange gap = this.toSeal;
			return ContiguousReplay.this.marks.deletedTo(this.persistenceId).thenCompose((mark) -> {
				this.mark = Math.max(this.mark, mark);
				if (gap == null || mark < gap.from()) {
					// Sealed, then read again from after the gap; or not sealed (the head moved), then judged again.
					return sealAndStepOver().thenCompose((stepped) -> stepped ? round() : later());
				}
				this.toSeal = null;
				this.sealAtEnd = false;
				return round();
			});
		}

		private CompletionStage<ReplayResult> later() {
			return this.holes.later(this::round);
		}

		/**
		 * Reads from {@code partition} to the upper bound's partition, one after the other (each partition's
		 * read starting when the previous one's last page arrives).
		 * @return whether reading stopped at a missing number that is still in flight
		 */
		private CompletionStage<Boolean> readPartitions(long partition) {
			long lastPartition = ContiguousReplay.this.reader.partitionOf(this.upper);
			return AsyncPaging.forEachRowWhile(ContiguousReplay.this.reader.partitionReads(this.persistenceId, partition,
					Math.max(partition, lastPartition), this.next, this.upper), this::accept);
		}

		/** @return false to stop before this row: a missing number below it is still in flight */
		private boolean accept(Row row) {
			long sequenceNr = RowValues.bigint(row, 0);
			if (sequenceNr > this.next && !this.markRead) {
				// Missing in the middle: read deleteTo's mark first (finding 19).
				this.markNeeded = true;
				this.stoppedAt = sequenceNr;
				return false;
			}
			if (sequenceNr > this.next && this.next <= this.mark) {
				// Missing below the mark after an event that survived under it: deleted, not in flight (finding 23).
				deletedBelow(sequenceNr);
			}
			if (sequenceNr > this.next) {
				// Missing in the middle: claimed no later than this event, stamped at its claim.
				if (!settle(sequenceNr - 1, RowValues.bigint(row, 1)) || this.toSeal != null) {
					return false;
				}
			}
			ContiguousReplay.this.reader.toEvents(this.persistenceId, row, this.type, this.consumer);
			this.last = sequenceNr;
			this.next = sequenceNr + 1;
			return true;
		}

		/** {@link #settle(long, long, boolean)} of a gap in the middle (a visible event above it). */
		private boolean settle(long to, long claimedAt) {
			return settle(to, claimedAt, false);
		}

		/**
		 * Decides on the missing numbers {@link #next}..{@code to}: still in flight, stepped over at once (seals off:
		 * an in-flight wait of zero or {@link SealConditions} unsafe; nothing is sealed), or to be sealed
		 * ({@link #toSeal}, all of them or those up to the head known when the hole was first met). With seals off, a
		 * gap that is the head's own claim is not stepped over at once when claims are lightweight transactions:
		 * {@link #sealAndStepOver} steps over it, unsealed, after the serial read of the head (finding 21, item 7);
		 * unless the caller holds such a gap ({@link #holdsUnsealedEnd}), which the read would not make safer.
		 * @param claimedAt no earlier than their claim: the next visible event's time stamp, or the head's
		 * @param headsClaim whether the numbers are the head's own claim (at the end, no visible event above)
		 * @return false while they are in flight
		 */
		private boolean settle(long to, long claimedAt, boolean headsClaim) {
			long settled = this.holes.settledUpTo(this.next, claimedAt, this.head, this.readStart);
			if (settled < this.next) {
				return false;
			}
			if (ContiguousReplay.this.seal == null) {
				// Seals off: stepped over unsealed, all of it (settled covers the head after the wait).
				if (settled < to) {
					return false;
				}
				if (!headsClaim || this.holdsUnsealedEnd || !ContiguousReplay.this.reader.claimsArePaxosRounds()) {
					stepOver(to, false);
					return true;
				}
			}
			this.toSeal = new SequenceRange(this.next, Math.min(to, settled));
			this.sealClaimedAt = claimedAt;
			this.sealAtEnd = headsClaim;
			return true;
		}

		/**
		 * Writes the seal of {@link #toSeal} ({@link Seal#write}), then steps over it (with seals off: steps over it
		 * unsealed, a gap at the end after the same serial read; finding 21, item 7). A gap at the end is sealed only
		 * if a serial read of the head still shows the claim this round judged (the same head, the same claim time):
		 * the claim's release may have been accepted by a quorum with its commit timed out, and the next Paxos round
		 * on the row (a serial read, or the next claim) completes it; the numbers are then claimed again by the next
		 * append, and a seal now would sit behind its acknowledged events (docs/reliability.md, finding 21 item 1). A
		 * gap in the middle has a visible event above it, so its claim cannot be released (a release is conditional
		 * on the head being the claim's last number, and no release is sent once any row of the append may exist).
		 * @return whether it stepped over the gap; false when the head moved, so the round is run again
		 */
		private CompletionStage<Boolean> sealAndStepOver() {
			SequenceRange gap = this.toSeal;
			boolean atEnd = this.sealAtEnd;
			this.toSeal = null;
			this.sealAtEnd = false;
			Seal seal = ContiguousReplay.this.seal;
			if (gap == null) {
				return CompletableFuture.completedFuture(true);
			}
			if (seal != null && seal.sealedBefore(this.persistenceId, gap.from(), gap.to(), this.sealClaimedAt)) {
				// Sealed by this journal for the same claim, after a serial read if it was at the end then.
				stepOver(gap.to(), true);
				return CompletableFuture.completedFuture(true);
			}
			if (!atEnd || !ContiguousReplay.this.reader.claimsArePaxosRounds()) {
				return seal(seal, gap);
			}
			long head = this.head;
			long claimedAt = this.sealClaimedAt;
			return ContiguousReplay.this.reader.serialHeadWithClaimTime(this.persistenceId).thenCompose((serial) -> {
				if (serial.sequenceNr() == head && serial.claimedAt() == claimedAt) {
					return seal(seal, gap);
				}
				// A completed release lowers the head, which a plain read at the journal's consistency may not show yet.
				this.upper = Math.max(Math.min(this.upper, serial.sequenceNr()), this.next - 1);
				return CompletableFuture.completedFuture(false);
			});
		}

		/** @param seal null with seals off: the gap is stepped over unsealed */
		private CompletionStage<Boolean> seal(@Nullable Seal seal, SequenceRange gap) {
			if (seal == null) {
				stepOver(gap.to(), false);
				return CompletableFuture.completedFuture(true);
			}
			return seal.write(this.persistenceId, gap.from(), gap.to(), seal.writeTime(this.sealClaimedAt))
				.thenApply((written) -> {
					stepOver(gap.to(), true);
					return true;
				});
		}

		private void stepOver(long to, boolean sealed) {
			SequenceRange gap = new SequenceRange(this.next, to);
			this.crashGaps.add(gap);
			this.unsealed |= !sealed;
			if (ContiguousReplay.this.gapWarnings.first(this.persistenceId + "#" + this.next)) {
				logger.warn("Sequence numbers {} of '{}' are claimed (head {}) but have no event after the in-flight "
						+ "wait of {}: stepped over as a crash gap{} (an append died between its claim and its batch; "
						+ "journal.checkConsistency reports it)", gap, this.persistenceId, this.head,
						ContiguousReplay.this.options.inFlightWait(),
						sealed ? " and sealed, so a batch of it still on its way never appears" : "");
			}
			this.next = to + 1;
		}

	}

}
