package io.cassandrajournal.journal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * Where this fits: the one rule for a sequence number that is claimed but not visible yet, applied by
 * {@link ContiguousReplay} (replays and entity projections) and {@link EventDeleter} ({@code deleteTo}). One
 * instance per call: it remembers the hole it last met.
 * <p>
 * A missing number is in flight while its claim is younger than {@link CassandraJournalOptions#inFlightWait()}
 * and this call first met it less than that long ago (a local bound, so a writer whose clock runs ahead cannot
 * stall the caller for longer). The local bound is measured on a monotonic ticker ({@link System#nanoTime}), not on
 * the journal's clock: a step of the reader's wall clock neither ends it early nor prolongs it (finding 15, item 4). Waiting is re-reading after a doubling backoff (10 ms to 200 ms, restarted for
 * each new hole) on {@link CompletableFuture#delayedExecutor}: no thread blocks.
 */
final class HoleWait {

	private static final long FIRST_BACKOFF_MILLIS = 10;

	private static final long MAX_BACKOFF_MILLIS = 200;

	private final CassandraJournalOptions options;

	/** Monotonic nanoseconds ({@link System#nanoTime} but in tests): the local bound's clock. */
	private final LongSupplier ticker;

	private long holeFrom = -1;

	/** The ticker's nanoseconds when the current hole was met (or claimed again): the local bound's start. */
	private long holeSeenAtNanos;

	/** The head known when the current hole was first met (for {@link #settledUpTo}). */
	private long holeHead;

	/**
	 * The claim time seen for the current hole by {@link #settledUpTo}: a later one means its number was released
	 * and claimed again by another writer, whose wait starts afresh.
	 */
	private long holeClaimedAt;

	private long backoff = FIRST_BACKOFF_MILLIS;

	HoleWait(CassandraJournalOptions options) {
		this(options, System::nanoTime);
	}

	/**
	 * @param options the journal's options (its clock and in-flight wait)
	 * @param ticker monotonic nanoseconds for the local bound ({@link System#nanoTime})
	 */
	HoleWait(CassandraJournalOptions options, LongSupplier ticker) {
		this.options = options;
		this.ticker = ticker;
	}

	/**
	 * When a read starts, on both clocks: the journal's (compared with claim time stamps, which come from the
	 * writers' clocks) and the monotonic ticker (for the local bound, so a step of the wall clock does not move it).
	 * @param wallMillis epoch millis of the journal's clock
	 * @param tickNanos the ticker's nanoseconds
	 */
	record ReadStart(long wallMillis, long tickNanos) {
	}

	/** @return now, to be taken before a read whose result {@link #settledUpTo} will judge */
	ReadStart readStart() {
		return new ReadStart(this.options.clock().millis(), this.ticker.getAsLong());
	}

	/** Remembers a hole met for the first time (or claimed again): the local bound starts at {@code now}. */
	private void meet(long missing, long head, long claimedAt, ReadStart now) {
		if (missing != this.holeFrom) {
			this.backoff = FIRST_BACKOFF_MILLIS;
		}
		this.holeFrom = missing;
		this.holeSeenAtNanos = now.tickNanos();
		this.holeHead = head;
		this.holeClaimedAt = claimedAt;
	}

	/** @return whether the ticker has advanced by the whole in-flight wait from the meeting of the hole to {@code at} */
	private boolean localBoundPassed(ReadStart at) {
		return at.tickNanos() - this.holeSeenAtNanos >= this.options.inFlightWait().toNanos();
	}

	/**
	 * The rule: a missing number is in flight while its claim is younger than {@code in-flight-wait} and this call
	 * met it less than that long ago (the local bound), judged at the time the read that shows the hole
	 * <em>started</em>, so the decision rests on a read that began after the wait expired (a writer acknowledges its batch only within {@code in-flight-wait} of taking its
	 * claim's time stamp, so such a read sees every acknowledged event; docs/reliability.md, finding 13).
	 * <p>
	 * The wait ends by either bound: by the claim's time stamp ({@code claimedAt} bounds every number below the
	 * visible event or head it comes from), or by the local bound, which covers only the numbers up to the head
	 * known when this call first met the hole (claimed before it was met); numbers above it are a new hole. A later
	 * claim time for the same hole (its number released and claimed again) restarts the local bound from now. The
	 * bound starts when the hole is met, after the read's start, which errs on the long side by the read's time; with
	 * an in-flight wait of zero nothing is in flight at all.
	 * @param missing the first missing sequence number
	 * @param claimedAt no earlier than its claim (epoch millis of the claiming writer's clock): the time stamp of
	 * the next visible event above it, or the head's {@code updated_at}
	 * @param head the head the read that met the hole was bounded by
	 * @param readStart when that read started ({@link #readStart})
	 * @return the last missing number that may be sealed and stepped over now; below {@code missing} while the hole
	 * is still in flight (wait and read again)
	 */
	long settledUpTo(long missing, long claimedAt, long head, ReadStart readStart) {
		if (this.options.inFlightWait().isZero()) {
			// Nothing waits (finding 21, item 4): also not for a claim stamped ahead of this clock or a head without
			// updated_at, whose local bound of zero, counted from a meeting after this read's start, had not passed.
			return Long.MAX_VALUE;
		}
		if (missing != this.holeFrom || claimedAt > this.holeClaimedAt) {
			// A later claim time for the same hole: claimed again after the hole was met (released by one writer,
			// claimed by another); the local bound, counted from the first meeting, would let the new claim be sealed
			// before its writer's deadline.
			meet(missing, head, claimedAt, readStart());
		}
		if (readStart.wallMillis() - claimedAt >= this.options.inFlightWait().toMillis()) {
			return Long.MAX_VALUE;
		}
		if (localBoundPassed(readStart)) {
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
