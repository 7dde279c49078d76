package io.cassandrajournal.journal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * Where this fits: the one rule for a sequence number that is claimed but not visible yet, applied by
 * {@link ContiguousReplay} (replays and entity projections) and {@link EventDeleter} ({@code deleteTo}). One
 * instance per call: it remembers the hole it last met.
 * <p>
 * A missing number is in flight while its claim is younger than {@link CassandraJournalOptions#inFlightWait()}
 * and this call first met it less than that long ago (a local bound, so a writer whose clock runs ahead cannot
 * stall the caller for longer). Waiting is re-reading after a doubling backoff (10 ms to 200 ms, restarted for
 * each new hole) on {@link CompletableFuture#delayedExecutor}: no thread blocks.
 */
final class HoleWait {

	private static final long FIRST_BACKOFF_MILLIS = 10;

	private static final long MAX_BACKOFF_MILLIS = 200;

	private final CassandraJournalOptions options;

	private long holeFrom = -1;

	private long holeSeenAt;

	/** The head known when the current hole was first met (for {@link #settledUpTo}). */
	private long holeHead;

	/**
	 * The claim time seen for the current hole by {@link #settledUpTo}: a later one means its number was released
	 * and claimed again by another writer, whose wait starts afresh.
	 */
	private long holeClaimedAt;

	private long backoff = FIRST_BACKOFF_MILLIS;

	HoleWait(CassandraJournalOptions options) {
		this.options = options;
	}

	/**
	 * @param missing the first missing sequence number
	 * @param claimedAt no earlier than its claim (epoch millis of the claiming writer's clock): the time stamp of
	 * the next visible event above it, or the head's {@code updated_at}
	 * @return whether it is still in flight (wait and read again) rather than a crash gap (step over it)
	 */
	boolean inFlight(long missing, long claimedAt) {
		long now = this.options.clock().millis();
		if (missing != this.holeFrom) {
			this.holeFrom = missing;
			this.holeSeenAt = now;
			this.holeHead = Long.MAX_VALUE;
			this.backoff = FIRST_BACKOFF_MILLIS;
		}
		long bound = this.options.inFlightWait().toMillis();
		return now - claimedAt < bound && now - this.holeSeenAt < bound;
	}

	/**
	 * The rule for a reader that seals what it steps over ({@link ContiguousReplay}): as {@link #inFlight}, but
	 * judged at the time the read that shows the hole <em>started</em>, so the decision rests on a read that began
	 * after the wait expired (a writer acknowledges its batch only within {@code in-flight-wait} of taking its
	 * claim's time stamp, so such a read sees every acknowledged event; docs/reliability.md, finding 13).
	 * <p>
	 * The wait ends by either bound: by the claim's time stamp ({@code claimedAt} bounds every number below the
	 * visible event or head it comes from), or by the local bound, which covers only the numbers up to the head
	 * known when this call first met the hole (claimed before it was met); numbers above it are a new hole. A later
	 * claim time for the same hole (its number released and claimed again) restarts the local bound from now.
	 * @param missing the first missing sequence number
	 * @param claimedAt as for {@link #inFlight}
	 * @param head the head the read that met the hole was bounded by
	 * @param readStartedAt when that read started (epoch millis of the journal's clock)
	 * @return the last missing number that may be sealed and stepped over now; below {@code missing} while the hole
	 * is still in flight (wait and read again)
	 */
	long settledUpTo(long missing, long claimedAt, long head, long readStartedAt) {
		long now = this.options.clock().millis();
		if (missing != this.holeFrom) {
			this.holeFrom = missing;
			this.holeSeenAt = now;
			this.holeHead = head;
			this.holeClaimedAt = claimedAt;
			this.backoff = FIRST_BACKOFF_MILLIS;
		}
		else if (claimedAt > this.holeClaimedAt) {
			// Claimed again after the hole was met (released by one writer, claimed by another): the local bound,
			// counted from the first meeting, would let the new claim be sealed before its writer's deadline.
			this.holeSeenAt = now;
			this.holeHead = head;
			this.holeClaimedAt = claimedAt;
		}
		long bound = this.options.inFlightWait().toMillis();
		if (readStartedAt - claimedAt >= bound) {
			return Long.MAX_VALUE;
		}
		if (readStartedAt - this.holeSeenAt >= bound) {
			return this.holeHead;
		}
		return missing - 1;
	}

	/**
	 * @param again the read to run again
	 * @return its stage, started after the current backoff (which then doubles)
	 */
	<T> CompletionStage<T> later(Supplier<? extends CompletionStage<T>> again) {
		long delay = this.backoff;
		this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MILLIS);
		return CompletableFuture.runAsync(() -> {
		}, CompletableFuture.delayedExecutor(delay, TimeUnit.MILLISECONDS)).thenCompose((ignored) -> again.get());
	}

}
