package io.cassandrajournal.projection;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
import io.cassandrajournal.testing.SettableClock;

import static org.assertj.core.api.Assertions.assertThat;

/** What a projection by persistenceId keeps of the crash gaps it stepped over, and for how long. */
class SteppedOverGapsTest {

	private final SettableClock clock = new SettableClock(Instant.parse("2026-12-02T00:00:00Z"));

	private final SteppedOverGaps gaps = new SteppedOverGaps("account-1", Duration.ofMinutes(10), this.clock);

	private long now() {
		return this.clock.millis();
	}

	@Test
	void aGapIsReadAgainUntilTheWindowAfterItsClaimHasPassed() {
		this.gaps.add(new SequenceRange(11, 12), now() - Duration.ofMinutes(1).toMillis());
		assertThat(this.gaps.due(14)).containsExactly(new SequenceRange(11, 12));

		this.clock.advance(Duration.ofMinutes(9));
		assertThat(this.gaps.due(14)).as("10 minutes after the claim").containsExactly(new SequenceRange(11, 12));
		this.clock.advance(Duration.ofSeconds(1));
		assertThat(this.gaps.due(14)).as("past the window").isEmpty();
		assertThat(this.gaps.isEmpty()).isTrue();
	}

	@Test
	void aGapWhoseWindowHasPassedAlreadyIsNotKept() {
		this.gaps.add(new SequenceRange(3, 4), now() - Duration.ofHours(1).toMillis());
		assertThat(this.gaps.isEmpty()).isTrue();
	}

	@Test
	void aZeroWindowKeepsNothing() {
		SteppedOverGaps off = new SteppedOverGaps("account-1", Duration.ZERO, this.clock);
		off.add(new SequenceRange(3, 4), now());
		assertThat(off.isEmpty()).isTrue();
	}

	@Test
	void onlyNumbersBelowTheCursorAreDueAndDeliveredNumbersAreForgotten() {
		this.gaps.add(new SequenceRange(5, 9), now());
		assertThat(this.gaps.due(7)).as("from 7 on the source reads them in order anyway")
			.containsExactly(new SequenceRange(5, 6));

		this.gaps.delivered(7);
		this.clock.advance(SteppedOverGaps.RECHECK_INTERVAL);
		assertThat(this.gaps.due(100)).containsExactly(new SequenceRange(5, 6), new SequenceRange(8, 9));
		this.gaps.delivered(5);
		this.gaps.delivered(6);
		this.gaps.delivered(8);
		this.gaps.delivered(9);
		assertThat(this.gaps.isEmpty()).isTrue();
	}

	@Test
	void aRangeSteppedOverAgainIsKeptOnce() {
		this.gaps.add(new SequenceRange(5, 6), now());
		this.gaps.add(new SequenceRange(9, 9), now());
		this.gaps.add(new SequenceRange(4, 10), now());
		assertThat(this.gaps.due(100)).containsExactly(new SequenceRange(4, 4), new SequenceRange(5, 6),
				new SequenceRange(7, 8), new SequenceRange(9, 9), new SequenceRange(10, 10));
	}

	@Test
	void atMostAHundredRangesAreKeptDroppingTheOldestClaims() {
		for (int i = 0; i < SteppedOverGaps.MAX_RANGES + 5; i++) {
			this.gaps.add(new SequenceRange(10L * i, 10L * i + 1), now() - 1000 + i);
		}
		assertThat(this.gaps.due(Long.MAX_VALUE)).hasSize(SteppedOverGaps.MAX_RANGES)
			.startsWith(new SequenceRange(50, 51));
	}

	@Test
	void keptRangesAreDueAtMostOncePerRecheckInterval() {
		this.gaps.add(new SequenceRange(11, 12), now());
		assertThat(this.gaps.due(14)).containsExactly(new SequenceRange(11, 12));
		assertThat(this.gaps.due(14)).as("the next poll at once").isEmpty();
		this.clock.advance(SteppedOverGaps.RECHECK_INTERVAL.minusMillis(1));
		assertThat(this.gaps.due(14)).as("just before the interval").isEmpty();
		this.clock.advance(Duration.ofMillis(1));
		assertThat(this.gaps.due(14)).as("after it").containsExactly(new SequenceRange(11, 12));
		assertThat(this.gaps.isEmpty()).as("still kept in between").isFalse();
	}

}
