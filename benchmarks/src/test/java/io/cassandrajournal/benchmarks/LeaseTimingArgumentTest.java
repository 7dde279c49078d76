package io.cassandrajournal.benchmarks;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** {@code --lease-timing}, the failover workload's lease timeout and renew interval. */
class LeaseTimingArgumentTest {

	@Test
	void takesATimeoutAndARenewIntervalInSecondsOrMilliseconds() {
		assertThat(BenchmarkMain.leaseTiming("4s,1s")).containsExactly(Duration.ofSeconds(4), Duration.ofSeconds(1));
		assertThat(BenchmarkMain.leaseTiming("1.5s,500ms")).containsExactly(Duration.ofMillis(1500),
				Duration.ofMillis(500));
	}

	@Test
	void refusesARenewIntervalAboveAThirdOfTheTimeoutAsTheEngineDoes() {
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkMain.leaseTiming("4s,2s"))
			.withMessageContaining("at most a third");
	}

	@Test
	void refusesAValueWithoutAUnitOrWithoutTwoParts() {
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkMain.leaseTiming("4,1"))
			.withMessageContaining("needs a unit");
		assertThatIllegalArgumentException().isThrownBy(() -> BenchmarkMain.leaseTiming("4s"))
			.withMessageContaining("<timeout>,<renew interval>");
	}

}
