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

	static Histogram histogram() {
		return new Histogram(60_000_000_000L, 3);
	}

	static double ms(Histogram histogram, double percentile) {
		return histogram.getValueAtPercentile(percentile) / 1_000_000.0;
	}

}
