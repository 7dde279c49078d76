package io.cassandrajournal.benchmarks;

import org.jspecify.annotations.Nullable;

/**
 * One workload's figures: medians over the rounds, ours and raw measured in the same run, alternating.
 *
 * @param name workload name
 * @param unit {@code ops/s}, {@code events/s} or {@code ms}
 * @param ours our median
 * @param raw the raw driver's median, or {@code null} where there is no raw counterpart
 * @param p50Ms our p50 latency where it applies
 * @param p99Ms our p99 latency where it applies
 * @param rawP50Ms raw p50 latency where it applies
 * @param rawP99Ms raw p99 latency where it applies
 * @param note what limits the number, or how it was measured
 */
record Result(String name, String unit, double ours, @Nullable Double raw, @Nullable Double p50Ms, @Nullable Double p99Ms,
		@Nullable Double rawP50Ms, @Nullable Double rawP99Ms, String note) {

	/** @return ours/raw for throughput, raw/ours for latency: 1.0 is parity, higher is better */
	@Nullable Double ratio() {
		if (this.raw == null || this.raw == 0 || this.ours == 0) {
			return null;
		}
		return "ms".equals(this.unit) ? this.raw / this.ours : this.ours / this.raw;
	}

}
