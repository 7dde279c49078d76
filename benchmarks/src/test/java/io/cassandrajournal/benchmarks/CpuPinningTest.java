package io.cassandrajournal.benchmarks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** The kernel's CPU lists that {@link CpuPinning} reads from {@code /proc/self/status}. */
class CpuPinningTest {

	@Test
	void readsSingleCoresAndRanges() {
		assertThat(CpuPinning.parseList("0-3,6")).containsExactly(0, 1, 2, 3, 6);
		assertThat(CpuPinning.parseList("1")).containsExactly(1);
		assertThat(CpuPinning.parseList(" 0-1 ")).containsExactly(0, 1);
	}

	@Test
	void readsThisProcesssAllowedCores() {
		assertThat(CpuPinning.allowedCpus()).isNotEmpty().allSatisfy((cpu) -> assertThat(cpu).isNotNegative());
	}

}
