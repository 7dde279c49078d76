package io.cassandrajournal.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.HdrHistogram.Histogram;

/** Medians and latency histograms. */
final class Stats {

	private Stats() {
	}

	static double median(List<Double> values) {
		List<Double> sorted = new ArrayList<>(values);
		Collections.sort(sorted);
		int n = sorted.size();
		return (n % 2 == 1) ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
	}

	/** @return (max - min) / median: 0.2 is a spread of 20% */
	static double spread(List<Double> values) {
		double median = median(values);
		return (median == 0) ? 0 : (Collections.max(values) - Collections.min(values)) / median;
	}

	static Histogram histogram() {
		return new Histogram(60_000_000_000L, 3);
	}

	static double ms(Histogram histogram, double percentile) {
		return histogram.getValueAtPercentile(percentile) / 1_000_000.0;
	}

}
