package io.cassandrajournal.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.state.CassandraDurableStateStore;

/**
 * A shared projection of {@link #SEGMENTS} segments with an I/O-bound handler (each event completes
 * {@link #HANDLER_WAIT} later, without holding a thread, as an asynchronous call to another service would), run
 * by 1, 2 and 3 instances (engines with their own instance id and threads, in this JVM): events per second from
 * the first append until every event is handled, the instances started and their segments spread first.
 */
final class SharedProjectionWorkloads {

	static final int SEGMENTS = 16;

	static final Duration HANDLER_WAIT = Duration.ofMillis(2);

	private static final Executor IO_WAIT = CompletableFuture.delayedExecutor(HANDLER_WAIT.toNanos(),
			TimeUnit.NANOSECONDS);

	private final Bench bench;

	private final ReadWorkloads reads;

	private final CassandraDurableStateStore state;

	SharedProjectionWorkloads(Bench bench, ReadWorkloads reads) {
		this.bench = bench;
		this.reads = reads;
		this.state = CassandraDurableStateStore.create(bench.session(), reads.options(), bench.serializer());
	}

	/** @return one result per number of instances, 1 to 3; the 2 and 3 results carry the ratio to 1 as raw */
	List<Result> throughput() {
		List<Result> results = new ArrayList<>();
		List<Double> single = List.of();
		for (int instances = 1; instances <= 3; instances++) {
			List<Double> rounds = new ArrayList<>();
			for (int round = 0; round < this.bench.sizes().rounds(); round++) {
				rounds.add(round(instances, round));
			}
			if (instances == 1) {
				single = rounds;
			}
			double ratio = Stats.median(rounds) / Stats.median(single);
			results.add(new Result("projection-shared-" + instances, "events/s", Stats.median(rounds), null, null, null,
					null, null, String.format("%d instance(s) in one JVM, %d segments, handler waits %d ms per event "
							+ "(async); %.2f x one instance", instances, SEGMENTS, HANDLER_WAIT.toMillis(), ratio),
					List.copyOf(rounds), List.of()));
		}
		return results;
	}

	private double round(int instances, int round) {
		int events = this.bench.sizes().projectionEvents();
		String tag = "shared-" + instances + "-" + round + "-" + System.nanoTime();
		String name = "bench-" + tag;
		CountDownLatch done = new CountDownLatch(events);
		List<ProjectionEngine> engines = new ArrayList<>();
		try {
			for (int i = 0; i < instances; i++) {
				ProjectionEngine engine = ProjectionEngine.builder(this.reads.journal())
					.readJournal(this.reads.query())
					.offsetStore(new DurableStateOffsetStore(this.state))
					.sharing(ProjectionSharing.create(this.bench.session(), this.reads.options())
						.withInstanceId(tag + "-instance-" + i)
						.withLeaseTiming(Duration.ofSeconds(3), Duration.ofMillis(500)))
					.build();
				engines.add(engine);
				engine.register(Projection.byTag(name, TagFilter.tag(tag), String.class, (EventHandler<String>) (event) -> {
					return CompletableFuture.runAsync(done::countDown, IO_WAIT);
				}, ProjectionSettings.defaults().withSegments(SEGMENTS).withPollInterval(Duration.ofMillis(100))));
			}
			for (ProjectionEngine engine : engines) {
				Bench.join(engine.startAll());
			}
			awaitSpread(engines, name);
			long started = System.nanoTime();
			append(tag, events);
			try {
				if (!done.await(10, TimeUnit.MINUTES)) {
					throw new IllegalStateException("shared projection did not finish");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			return events / ((System.nanoTime() - started) / 1e9);
		}
		finally {
			engines.forEach(ProjectionEngine::close);
		}
	}

	/** Waits (up to 60 s) until every segment runs on some instance and every instance runs at least one. */
	private static void awaitSpread(List<ProjectionEngine> engines, String name) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
		while (System.nanoTime() < deadline) {
			int total = 0;
			boolean each = true;
			for (ProjectionEngine engine : engines) {
				long here = engine.segments(name).stream().filter((s) -> s.runsHere()).count();
				total += (int) here;
				each &= here > 0;
			}
			if (total == SEGMENTS && each) {
				return;
			}
			try {
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
		}
		throw new IllegalStateException("segments of " + name + " not spread over " + engines.size() + " instances");
	}

	/** Appends the events over 64 persistenceIds (spread over the segments), 100 per append. */
	private void append(String tag, int events) {
		int ids = 64;
		long[] heads = new long[ids];
		List<CompletableFuture<?>> inFlight = new ArrayList<>();
		int written = 0;
		while (written < events) {
			for (int p = 0; p < ids && written < events; p++) {
				int n = Math.min(100, events - written);
				List<EventToAppend> batch = new ArrayList<>(n);
				for (int i = 0; i < n; i++) {
					batch.add(EventToAppend.of(new AppendWorkloads.Deposited(1), tag));
				}
				inFlight.add(this.reads.journal().append(tag + "-" + p, heads[p], batch).toCompletableFuture());
				heads[p] += n;
				written += n;
			}
			inFlight.forEach(CompletableFuture::join);
			inFlight.clear();
		}
	}

}
