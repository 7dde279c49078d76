package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import com.datastax.oss.driver.api.core.cql.Row;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.RowValues;
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
 */
final class ContiguousReplay {

	private static final Logger logger = LoggerFactory.getLogger(ContiguousReplay.class);

	private final CassandraJournalOptions options;

	private final EventReader reader;

	private final WarnOnce gapWarnings = new WarnOnce(10_000);

	public ContiguousReplay(CassandraJournalOptions options, EventReader reader) {
		this.options = options;
		this.reader = reader;
	}

	/**
	 * @param type the payload type, or {@code null} for the stored JSON text
	 */
	public <E> CompletionStage<ReplayResult> replay(String persistenceId, long from, long to, @Nullable Class<E> type,
			Consumer<? super PersistentEvent<E>> consumer) {
		return new Run<>(persistenceId, from, to, type, consumer).round();
	}

	/** One call's state: only one stage of it runs at a time. */
	private final class Run<E> {

		private final String persistenceId;

		private final @Nullable Class<E> type;

		private final Consumer<? super PersistentEvent<E>> consumer;

		private final List<SequenceRange> crashGaps = new ArrayList<>();

		/** Fixed by the first head read; only shrinks (a released claim), so a busy entity cannot keep us here. */
		private long upper;

		private long head;

		private long next;

		private long last;

		private final HoleWait holes = new HoleWait(ContiguousReplay.this.options);

		Run(String persistenceId, long from, long to, @Nullable Class<E> type, Consumer<? super PersistentEvent<E>> consumer) {
			this.persistenceId = persistenceId;
			this.type = type;
			this.consumer = consumer;
			this.next = from;
			this.upper = to;
		}

		CompletionStage<ReplayResult> round() {
			return ContiguousReplay.this.reader.headWithClaimTime(this.persistenceId).thenCompose((head) -> {
				this.head = head.sequenceNr();
				this.upper = Math.min(this.upper, this.head);
				if (this.next > this.upper) {
					return done();
				}
				return readPartitions(ContiguousReplay.this.reader.partitionOf(this.next)).thenCompose((stopped) -> {
					if (!stopped && this.next <= this.upper) {
						// Missing at the end: claimed no later than the head's updated_at.
						if (inFlight(this.next, head.claimedAt())) {
							stopped = true;
						}
						else {
							stepOver(this.upper);
						}
					}
					return stopped ? later() : done();
				});
			});
		}

		private CompletionStage<ReplayResult> done() {
			return CompletableFuture.completedFuture(
					new ReplayResult(this.last, this.next - 1, this.head, this.crashGaps));
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
			if (sequenceNr > this.next) {
				// Missing in the middle: claimed no later than this event, stamped at its claim.
				if (inFlight(this.next, RowValues.bigint(row, 1))) {
					return false;
				}
				stepOver(sequenceNr - 1);
			}
			ContiguousReplay.this.reader.toEvents(this.persistenceId, row, this.type, this.consumer);
			this.last = sequenceNr;
			this.next = sequenceNr + 1;
			return true;
		}

		private boolean inFlight(long missing, long claimedAt) {
			return this.holes.inFlight(missing, claimedAt);
		}

		private void stepOver(long to) {
			SequenceRange gap = new SequenceRange(this.next, to);
			this.crashGaps.add(gap);
			if (ContiguousReplay.this.gapWarnings.first(this.persistenceId + "#" + this.next)) {
				logger.warn("Sequence numbers {} of '{}' are claimed (head {}) but have no event after the in-flight "
						+ "wait of {}: stepped over as a crash gap (an append died between its claim and its batch; "
						+ "journal.checkConsistency reports it)", gap, this.persistenceId, this.head,
						ContiguousReplay.this.options.inFlightWait());
			}
			this.next = to + 1;
		}

	}

}
