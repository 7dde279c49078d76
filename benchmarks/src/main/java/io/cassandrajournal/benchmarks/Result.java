package io.cassandrajournal.benchmarks;

import java.util.List;

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
 * @param oursRounds our figure of each round, in the order run (empty where not kept)
 * @param rawRounds the raw figure of each round (empty where not kept)
 */
record Result(String name, String unit, double ours, @Nullable Double raw, @Nullable Double p50Ms, @Nullable Double p99Ms,
		@Nullable Double rawP50Ms, @Nullable Double rawP99Ms, String note, List<Double> oursRounds,
		List<Double> rawRounds) {

	Result(String name, String unit, double ours, @Nullable Double raw, @Nullable Double p50Ms, @Nullable Double p99Ms,
			@Nullable Double rawP50Ms, @Nullable Double rawP99Ms, String note) {
		this(name, unit, ours, raw, p50Ms, p99Ms, rawP50Ms, rawP99Ms, note, List.of(), List.of());
	}

	/** A throughput result: the medians of the rounds, the rounds kept for the spread. */
	static Result of(String name, String unit, List<Double> ours, List<Double> raws, String note) {
		return new Result(name, unit, Stats.median(ours), Stats.median(raws), null, null, null, null, note,
				List.copyOf(ours), List.copyOf(raws));
	}

	/** @return ours/raw for throughput, raw/ours for latency: 1.0 is parity, higher is better */
	@Nullable Double ratio() {
		if (this.raw == null || this.raw == 0 || this.ours == 0) {
			return null;
		}
		return "ms".equals(this.unit) ? this.raw / this.ours : this.ours / this.raw;
	}

}
