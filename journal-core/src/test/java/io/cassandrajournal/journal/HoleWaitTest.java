package io.cassandrajournal.journal;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.testing.SettableClock;

import static org.assertj.core.api.Assertions.assertThat;

/** When a reader that seals may step over a missing number (docs/reliability.md, finding 13). */
class HoleWaitTest {

	private static final long WAIT = 1000;

	private final SettableClock clock = new SettableClock(Instant.parse("2026-12-02T00:00:00Z"));

	private final HoleWait holes = new HoleWait(CassandraJournalOptions.create()
		.withClock(this.clock)
		.withInFlightWait(Duration.ofMillis(WAIT)));

	@Test
	void aNumberReleasedAndClaimedAgainByAnotherWriterIsWaitedForAfresh() {
		long h = this.clock.millis();
		// Writer A claimed 2 just before the reader met the hole.
		assertThat(this.holes.settledUpTo(2, h - 100, 2, h)).as("A's claim in flight").isEqualTo(1);

		// A released 2; writer B claimed it again at h + 500 (a later claim time for the same hole).
		this.clock.advance(Duration.ofMillis(WAIT));
		long now = this.clock.millis();
		assertThat(this.holes.settledUpTo(2, h + 500, 2, now))
			.as("B's claim is younger than in-flight-wait: the local bound restarts, nothing is sealed")
			.isEqualTo(1);

		// The claim-time bound of B's claim still ends the wait.
		this.clock.set(Instant.ofEpochMilli(h + 500 + WAIT));
		now = this.clock.millis();
		assertThat(this.holes.settledUpTo(2, h + 500, 2, now)).isEqualTo(Long.MAX_VALUE);
	}

	@Test
	void theLocalBoundStillEndsTheWaitForAnUnchangedClaim() {
		long h = this.clock.millis();
		// A claim stamped ahead of the reader's clock (a writer clock running ahead).
		assertThat(this.holes.settledUpTo(2, h + 5000, 3, h)).isEqualTo(1);
		this.clock.advance(Duration.ofMillis(WAIT - 1));
		assertThat(this.holes.settledUpTo(2, h + 5000, 4, this.clock.millis())).isEqualTo(1);
		this.clock.advance(Duration.ofMillis(1));
		assertThat(this.holes.settledUpTo(2, h + 5000, 4, this.clock.millis()))
			.as("up to the head known when the hole was first met")
			.isEqualTo(3);
	}

}
