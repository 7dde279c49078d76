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
 * @param priceOf {@code null} where the other side ({@code raw}) is the raw driver doing the same work, so that the
 * ratio is our overhead; for a price row ({@link #price}), what its other side is instead (ours doing less, or the
 * cheapest write), so that the ratio is the price of what ours does more
 */
record Result(String name, String unit, double ours, @Nullable Double raw, @Nullable Double p50Ms, @Nullable Double p99Ms,
		@Nullable Double rawP50Ms, @Nullable Double rawP99Ms, String note, List<Double> oursRounds,
		List<Double> rawRounds, @Nullable String priceOf) {

	/** {@link #kind()} of a row whose other side is the raw driver doing the same work: the ratio is overhead. */
	static final String OVERHEAD = "overhead";

	/** {@link #kind()} of a row whose other side is not the raw driver doing the same work: the ratio is a price. */
	static final String PRICE = "price";

	/** {@link #kind()} of a row without another side (no ratio). */
	static final String ALONE = "alone";

	/** The other side of every {@link #OVERHEAD} row, as the report names it. */
	static final String RAW_DRIVER = "raw driver, same work";

	Result(String name, String unit, double ours, @Nullable Double raw, @Nullable Double p50Ms, @Nullable Double p99Ms,
			@Nullable Double rawP50Ms, @Nullable Double rawP99Ms, String note, List<Double> oursRounds,
			List<Double> rawRounds) {
		this(name, unit, ours, raw, p50Ms, p99Ms, rawP50Ms, rawP99Ms, note, oursRounds, rawRounds, null);
	}

	Result(String name, String unit, double ours, @Nullable Double raw, @Nullable Double p50Ms, @Nullable Double p99Ms,
			@Nullable Double rawP50Ms, @Nullable Double rawP99Ms, String note) {
		this(name, unit, ours, raw, p50Ms, p99Ms, rawP50Ms, rawP99Ms, note, List.of(), List.of());
	}

	/** A throughput result: the medians of the rounds, the rounds kept for the spread. */
	static Result of(String name, String unit, List<Double> ours, List<Double> raws, String note) {
		return new Result(name, unit, Stats.median(ours), Stats.median(raws), null, null, null, null, note,
				List.copyOf(ours), List.copyOf(raws));
	}

	/**
	 * This row as a price row: its other side (in the {@code raw} fields, kept there for the readers of
	 * {@code latest.json}) is not the raw driver doing the same work.
	 * @param otherSide what the other side is, as the report's column names it (such as {@code ours without
	 * upcasters})
	 * @return the same figures, labelled
	 */
	Result price(String otherSide) {
		return new Result(this.name, this.unit, this.ours, this.raw, this.p50Ms, this.p99Ms, this.rawP50Ms,
				this.rawP99Ms, this.note, this.oursRounds, this.rawRounds, otherSide);
	}

	/** @return {@link #PRICE}, {@link #OVERHEAD} (a raw side) or {@link #ALONE} (none) */
	String kind() {
		if (this.priceOf != null) {
			return PRICE;
		}
		return (this.raw != null) ? OVERHEAD : ALONE;
	}

	/** @return what the other side is: {@link #RAW_DRIVER}, the price row's other side, or {@code null} (none) */
	@Nullable String otherSide() {
		if (this.priceOf != null) {
			return this.priceOf;
		}
		return (this.raw != null) ? RAW_DRIVER : null;
	}

	/** @return ours/raw for throughput, raw/ours for latency: 1.0 is parity, higher is better */
	@Nullable Double ratio() {
		if (this.raw == null || this.raw == 0 || this.ours == 0) {
			return null;
		}
		return "ms".equals(this.unit) ? this.raw / this.ours : this.ours / this.raw;
	}

}
