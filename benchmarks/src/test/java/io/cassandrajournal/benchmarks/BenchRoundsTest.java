package io.cassandrajournal.benchmarks;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Bench#rounds}: a full run's warm-up round is run and its figures dropped, the measured rounds
 * follow it, and a smoke run has no warm-up.
 */
class BenchRoundsTest {

	@Test
	void fullRunDropsItsWarmUpRound() {
		Bench bench = new Bench(null, null, null, Bench.Sizes.full());
		List<Integer> run = new ArrayList<>();
		List<Double> ours = new ArrayList<>();
		List<Double> raws = new ArrayList<>();
		List<Double> other = new ArrayList<>();
		bench.rounds((round) -> {
			run.add(round);
			// The warm-up is slow, the measured rounds steady (no spread: no extra rounds).
			ours.add(round == 0 ? 1.0 : 100.0);
			raws.add(round == 0 ? 2.0 : 100.0);
			other.add((double) round);
		}, ours, raws);
		assertThat(run).containsExactly(0, 1, 2, 3);
		assertThat(ours).containsExactly(100.0, 100.0, 100.0);
		assertThat(raws).containsExactly(100.0, 100.0, 100.0);
		assertThat(Bench.measured(other, ours.size())).containsExactly(1.0, 2.0, 3.0);
	}

	@Test
	void latencyRoundsAlternateAndKeepTheMeasuredRoundsHistograms() {
		// As AppendWorkloads.latency: each side adds its round's p50 (the figures the rule reads) and keeps what it
		// measured beside it; the warm-up's is dropped from the figures, and Bench.measured drops it from the rest.
		Bench bench = new Bench(null, null, null, Bench.Sizes.full());
		List<String> order = new ArrayList<>();
		List<String> kept = new ArrayList<>();
		List<Double> ours = new ArrayList<>();
		List<Double> raws = new ArrayList<>();
		bench.rounds((round) -> Bench.alternate(round, () -> {
			order.add("ours-" + round);
			kept.add("histogram-" + round);
			ours.add(round == 0 ? 9.0 : 2.0);
		}, () -> {
			order.add("raw-" + round);
			raws.add(round == 0 ? 9.0 : 2.0);
		}), ours, raws);
		assertThat(order).containsExactly("ours-0", "raw-0", "raw-1", "ours-1", "ours-2", "raw-2", "raw-3", "ours-3");
		assertThat(ours).containsExactly(2.0, 2.0, 2.0);
		assertThat(raws).containsExactly(2.0, 2.0, 2.0);
		assertThat(Bench.measured(kept, ours.size())).containsExactly("histogram-1", "histogram-2", "histogram-3");
	}

	@Test
	void spreadRunsMoreRoundsAfterTheWarmUp() {
		Bench bench = new Bench(null, null, null, Bench.Sizes.full());
		List<Integer> run = new ArrayList<>();
		List<Double> ours = new ArrayList<>();
		double[] figures = { 1, 50, 100, 150, 100, 100, 100, 100, 100, 100, 100 };
		bench.rounds((round) -> {
			run.add(round);
			ours.add(figures[round]);
		}, ours);
		// Rounds 1-3 spread 100% around their median: more rounds until the median stops moving.
		assertThat(run.get(0)).isZero();
		assertThat(run.size()).isGreaterThan(4).isLessThanOrEqualTo(1 + 9);
		assertThat(ours).doesNotContain(1.0).hasSize(run.size() - 1);
	}

	@Test
	void smokeRunHasNoWarmUp() {
		Bench bench = new Bench(null, null, null, Bench.Sizes.smoke());
		List<Integer> run = new ArrayList<>();
		List<Double> ours = new ArrayList<>();
		bench.rounds((round) -> {
			run.add(round);
			ours.add(1.0);
		}, ours);
		assertThat(run).containsExactly(0);
		assertThat(ours).containsExactly(1.0);
	}

}
