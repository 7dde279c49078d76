package io.cassandrajournal.journal;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;

import static org.assertj.core.api.Assertions.assertThat;

/** The writer's deadline (docs/reliability.md, finding 13): in-flight-wait less a margin. */
class AppendDeadlineTest {

	@Test
	void theDeadlineKeepsAMarginOfOnePercentAndAtLeastFiveMilliseconds() {
		assertThat(AppendWriter.deadlineNanos(Duration.ofSeconds(30))).isEqualTo(Duration.ofMillis(29_700).toNanos());
		assertThat(AppendWriter.deadlineNanos(Duration.ofSeconds(1))).isEqualTo(Duration.ofMillis(990).toNanos());
		assertThat(AppendWriter.deadlineNanos(Duration.ofMillis(100))).isEqualTo(Duration.ofMillis(95).toNanos());
	}

	/**
	 * Review of finding 21, items 4-7: the release is sent with a request timeout that ends, plus the settle time and
	 * a 250 ms margin, before the deadline; never below 500 ms (or the request timeout, if shorter).
	 */
	@Test
	void theReleaseTimeoutIsWhatIsLeftBeforeTheDeadlineAfterTheSettleTime() {
		CassandraJournalOptions tenSeconds = CassandraJournalOptions.create()
			.withInFlightWait(Duration.ofSeconds(10))
			.withRequestTimeout(Duration.ofSeconds(10))
			.withClaimSettleTime(Duration.ofSeconds(1));
		// 9.9 s deadline - 0.1 s - 1 s - 0.25 s
		assertThat(AppendWriter.releaseTimeout(tenSeconds, Duration.ofMillis(100).toNanos()))
			.isEqualTo(Duration.ofMillis(8_550));
		assertThat(AppendWriter.releaseTimeout(tenSeconds, Duration.ofMillis(8_100).toNanos()))
			.isEqualTo(Duration.ofMillis(550));
		assertThat(AppendWriter.releaseTimeout(tenSeconds, Duration.ofMillis(8_200).toNanos())).isNull();
		// The defaults (30 s, 10 s, 6 s): the full request timeout early on.
		assertThat(AppendWriter.releaseTimeout(CassandraJournalOptions.create(), 0)).isEqualTo(Duration.ofSeconds(10));
		assertThat(AppendWriter.releaseTimeout(tenSeconds.withRequestTimeout(Duration.ofMillis(200)), 0))
			.isEqualTo(Duration.ofMillis(200));
		assertThat(AppendWriter.releaseTimeout(tenSeconds.withInFlightWait(Duration.ZERO), Long.MAX_VALUE / 2))
			.isEqualTo(Duration.ofSeconds(10));
	}

}
