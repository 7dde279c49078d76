package io.cassandrajournal.journal;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.testing.SettableClock;

import static org.assertj.core.api.Assertions.assertThat;

/** When a reader that seals may step over a missing number (docs/reliability.md, finding 13). */
class HoleWaitTest {

	private static final long WAIT = 1000;

	private final SettableClock clock = new SettableClock(Instant.parse("2026-12-02T00:00:00Z"));

	/** The monotonic ticker of the local bound (nanoseconds); moved together with the clock unless a test says not. */
	private final AtomicLong ticker = new AtomicLong(123_456_789L);

	private final HoleWait holes = new HoleWait(CassandraJournalOptions.create()
		.withClock(this.clock)
		.withInFlightWait(Duration.ofMillis(WAIT)), this.ticker::get);

	private void advance(Duration elapsed) {
		this.clock.advance(elapsed);
		this.ticker.addAndGet(elapsed.toNanos());
	}

	private HoleWait.ReadStart readStart() {
		return this.holes.readStart();
	}

	@Test
	void aNumberReleasedAndClaimedAgainByAnotherWriterIsWaitedForAfresh() {
		long h = this.clock.millis();
		// Writer A claimed 2 just before the reader met the hole.
		assertThat(this.holes.settledUpTo(2, h - 100, 2, readStart())).as("A's claim in flight").isEqualTo(1);

		// A released 2; writer B claimed it again at h + 500 (a later claim time for the same hole).
		advance(Duration.ofMillis(WAIT));
		assertThat(this.holes.settledUpTo(2, h + 500, 2, readStart()))
			.as("B's claim is younger than in-flight-wait: the local bound restarts, nothing is sealed")
			.isEqualTo(1);

		// The claim-time bound of B's claim still ends the wait.
		advance(Duration.ofMillis(500));
		assertThat(this.holes.settledUpTo(2, h + 500, 2, readStart())).isEqualTo(Long.MAX_VALUE);
	}

	@Test
	void theLocalBoundStillEndsTheWaitForAnUnchangedClaim() {
		long h = this.clock.millis();
		// A claim stamped ahead of the reader's clock (a writer clock running ahead).
		assertThat(this.holes.settledUpTo(2, h + 5000, 3, readStart())).isEqualTo(1);
		advance(Duration.ofMillis(WAIT - 1));
		assertThat(this.holes.settledUpTo(2, h + 5000, 4, readStart())).isEqualTo(1);
		advance(Duration.ofMillis(1));
		assertThat(this.holes.settledUpTo(2, h + 5000, 4, readStart()))
			.as("up to the head known when the hole was first met")
			.isEqualTo(3);
	}

	/**
	 * Finding 15, item 4: the local bound is measured on a monotonic ticker, not on the wall clock. A forward step
	 * of the reader's wall clock by the whole wait, with no time elapsed, does not authorise a seal; the wait then
	 * ends when the ticker has advanced by it.
	 */
	@Test
	void aForwardStepOfTheWallClockDoesNotEndTheLocalWait() {
		long h = this.clock.millis();
		// A claim stamped 5 s ahead of the reader's clock (a writer clock running ahead): only the local bound ends it.
		assertThat(this.holes.settledUpTo(2, h + 5000, 3, readStart())).isEqualTo(1);
		this.clock.advance(Duration.ofMillis(WAIT));
		assertThat(this.holes.settledUpTo(2, h + 5000, 3, readStart()))
			.as("the wall clock stepped forward by the wait, no time elapsed: still in flight")
			.isEqualTo(1);
		this.ticker.addAndGet(Duration.ofMillis(WAIT).toNanos());
		assertThat(this.holes.settledUpTo(2, h + 5000, 3, readStart())).as("the wait elapsed").isEqualTo(3);
	}

	/** A backward step of the wall clock does not prolong the local wait either. */
	@Test
	void aBackwardStepOfTheWallClockDoesNotProlongTheLocalWait() {
		long h = this.clock.millis();
		assertThat(this.holes.settledUpTo(2, h + 5000, 3, readStart())).isEqualTo(1);
		this.clock.advance(Duration.ofMillis(-10 * WAIT));
		this.ticker.addAndGet(Duration.ofMillis(WAIT).toNanos());
		assertThat(this.holes.settledUpTo(2, h + 5000, 3, readStart())).isEqualTo(3);
	}

	/**
	 * Finding 21, item 4: with an in-flight wait of zero nothing waits, also for a claim stamped ahead of the reader's
	 * clock (a writer clock running ahead) or a head without {@code updated_at} (no claim time at all). The hole used
	 * to be met with a fresh reading of the ticker, taken after the round's start it is judged by, so a local bound of
	 * zero had not passed yet and "0 never waits" cost one backoff round. The ticker here advances by 1 µs per reading,
	 * as a real one does.
	 */
	@Test
	void withAWaitOfZeroNothingWaitsEvenForAClaimStampedAhead() {
		AtomicLong ticking = new AtomicLong(123_456_789L);
		HoleWait zero = new HoleWait(CassandraJournalOptions.create().withClock(this.clock).withInFlightWait(Duration.ZERO),
				() -> ticking.addAndGet(1_000));
		long h = this.clock.millis();
		assertThat(zero.settledUpTo(2, h + 5000, 3, zero.readStart())).as("a claim stamped 5 s ahead")
			.isGreaterThanOrEqualTo(3);
		assertThat(zero.settledUpTo(5, Long.MAX_VALUE, 6, zero.readStart())).as("a head without updated_at")
			.isGreaterThanOrEqualTo(6);
	}

}
