package io.cassandrajournal.journal;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The writer's deadline (docs/reliability.md, finding 13): in-flight-wait less a margin. */
class AppendDeadlineTest {

	@Test
	void theDeadlineKeepsAMarginOfOnePercentAndAtLeastFiveMilliseconds() {
		assertThat(AppendWriter.deadlineNanos(Duration.ofSeconds(30))).isEqualTo(Duration.ofMillis(29_700).toNanos());
		assertThat(AppendWriter.deadlineNanos(Duration.ofSeconds(1))).isEqualTo(Duration.ofMillis(990).toNanos());
		assertThat(AppendWriter.deadlineNanos(Duration.ofMillis(100))).isEqualTo(Duration.ofMillis(95).toNanos());
	}

}
