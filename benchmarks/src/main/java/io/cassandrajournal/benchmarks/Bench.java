package io.cassandrajournal.benchmarks;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntFunction;

import com.datastax.oss.driver.api.core.CqlSession;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.serialization.JacksonEventSerializer;

/**
 * What every workload shares: one session (so both sides have the same driver settings, protocol version,
 * consistency and page size), the options, and the sizes of this run.
 *
 * @param session the session
 * @param options journal options (keyspace, LOCAL_QUORUM, page size 1,000)
 * @param serializer the serializer
 * @param sizes the sizes of this run
 */
record Bench(CqlSession session, CassandraJournalOptions options, JacksonEventSerializer serializer, Sizes sizes) {

	/** One small event, the same JSON on both sides. */
	static final String PAYLOAD = "{\"kind\":\"deposited\",\"amount\":25}";

	/**
	 * Sizes of a run.
	 *
	 * @param rounds alternating rounds per workload
	 * @param appends appends per throughput round
	 * @param persistenceIds persistenceIds the appends spread over
	 * @param latencySamples sequential appends for the latency workload
	 * @param replayEvents events replayed
	 * @param tagEvents tagged events walked
	 * @param projectionEvents events through the projection
	 * @param endToEndSamples append-to-handler samples
	 * @param scalingAppends appends per scaling point
	 */
	record Sizes(int rounds, int appends, int persistenceIds, int latencySamples, int replayEvents, int tagEvents,
			int projectionEvents, int endToEndSamples, int scalingAppends) {

		static Sizes full() {
			return new Sizes(3, 20_000, 2_000, 2_000, 100_000, 100_000, 20_000, 300, 4_000);
		}

		static Sizes smoke() {
			return new Sizes(1, 200, 50, 30, 2_000, 2_000, 300, 10, 100);
		}

		Sizes withRounds(int newRounds) {
			return new Sizes(newRounds, this.appends, this.persistenceIds, this.latencySamples, this.replayEvents,
					this.tagEvents, this.projectionEvents, this.endToEndSamples, this.scalingAppends);
		}

	}

	/** Spread over which a workload runs more rounds: (max - min) / median of a side's rounds. */
	static final double MAX_SPREAD = 0.20;

	/**
	 * Runs a workload's rounds: with three or more asked (a full run), first one warm-up round whose figures are
	 * dropped (the first round of a workload was nearly always its slowest: fresh prepared statements, cold
	 * caches and JIT, a memtable just flushed by the workload before); then {@code sizes.rounds()} of them, then,
	 * while a side's spread is over {@link #MAX_SPREAD}, one more at a time until no side's median moved by more
	 * than 2% in the last round, at most three times as many rounds in all (and never fewer than the asked rounds).
	 * The warm-up is round {@code 0} and the measured rounds count on from {@code 1}, so a workload that
	 * alternates its sides by the round's number still starts its measured rounds with the other side first.
	 * @param round runs round {@code n}, adding one figure to each side's list
	 * @param sides each side's figures, in the order run (a workload's other per-round lists keep the warm-up's
	 * figure first: drop it with {@link #measured})
	 */
	@SafeVarargs
	final void rounds(java.util.function.IntConsumer round, List<Double>... sides) {
		int base = this.sizes.rounds();
		if (base < 3) {
			for (int n = 0; n < base; n++) {
				round.accept(n);
			}
			return;
		}
		int[] before = new int[sides.length];
		for (int i = 0; i < sides.length; i++) {
			before[i] = sides[i].size();
		}
		round.accept(0);
		for (int i = 0; i < sides.length; i++) {
			sides[i].subList(before[i], sides[i].size()).clear();
		}
		int n = 0;
		while (n < base) {
			round.accept(1 + n++);
		}
		while (n < 3 * base && spreadOver(sides)) {
			double[] previous = medians(sides);
			round.accept(1 + n++);
			double[] after = medians(sides);
			boolean stable = true;
			for (int i = 0; i < sides.length; i++) {
				stable &= Math.abs(after[i] - previous[i]) <= 0.02 * previous[i];
			}
			if (stable) {
				return;
			}
		}
	}

	/**
	 * A workload's figures of its measured rounds: the last {@code rounds} of a per-round list that {@link #rounds}
	 * did not trim (it holds the warm-up's figure first in a full run): figures, or what a round kept beside them
	 * (the latency workload's histograms).
	 */
	static <T> List<T> measured(List<T> perRound, int rounds) {
		return perRound.subList(Math.max(0, perRound.size() - rounds), perRound.size());
	}

	/** Runs both sides of a round, ours first in even rounds and second in odd ones. */
	static void alternate(int round, Runnable ours, Runnable raw) {
		if (round % 2 == 0) {
			ours.run();
			raw.run();
		}
		else {
			raw.run();
			ours.run();
		}
	}

	@SafeVarargs
	private static boolean spreadOver(List<Double>... sides) {
		for (List<Double> side : sides) {
			if (!side.isEmpty() && Stats.spread(side) > MAX_SPREAD) {
				return true;
			}
		}
		return false;
	}

	@SafeVarargs
	private static double[] medians(List<Double>... sides) {
		double[] medians = new double[sides.length];
		for (int i = 0; i < sides.length; i++) {
			medians[i] = sides[i].isEmpty() ? 0 : Stats.median(sides[i]);
		}
		return medians;
	}

	/**
	 * Runs {@code count} async operations with at most {@code inFlight} outstanding.
	 * @return elapsed nanoseconds
	 */
	static long run(int count, int inFlight, IntFunction<CompletionStage<?>> operation) {
		Semaphore permits = new Semaphore(inFlight);
		AtomicReference<Throwable> failure = new AtomicReference<>();
		long started = System.nanoTime();
		for (int i = 0; i < count && failure.get() == null; i++) {
			permits.acquireUninterruptibly();
			operation.apply(i).whenComplete((ok, error) -> {
				if (error != null) {
					failure.compareAndSet(null, error);
				}
				permits.release();
			});
		}
		permits.acquireUninterruptibly(inFlight);
		if (failure.get() != null) {
			throw new IllegalStateException("benchmark operation failed", failure.get());
		}
		return System.nanoTime() - started;
	}

	static <T> T join(CompletionStage<T> stage) {
		return stage.toCompletableFuture().join();
	}

	static CompletableFuture<Void> allOf(List<CompletableFuture<?>> futures) {
		return CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new));
	}

}
