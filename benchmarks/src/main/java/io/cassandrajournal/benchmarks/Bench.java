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
