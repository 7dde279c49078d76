package io.cassandrajournal.benchmarks;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.state.CassandraDurableStateStore;

/**
 * A shared projection of {@link #SEGMENTS} segments with an I/O-bound handler (each event completes
 * {@link #HANDLER_WAIT} later, without holding a thread, as an asynchronous call to another service would), run
 * by 1, 2 and 3 instances (engines with their own instance id and threads, in this JVM): events per second from
 * the first append until every event is handled, the instances started and their segments spread first.
 * <p>
 * Read amplification: each instance's read journal runs on a {@link CountingSession}, so the rows the tag index
 * returns to that instance are counted; divided by the events its handler was called for, that is the rows an
 * owner reads per event it handles, per tag layout and number of instances.
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

	/**
	 * One round's figures.
	 *
	 * @param eventsPerSecond first append to last event handled
	 * @param rowsPerEvent per instance that handled events: tag index rows (bucket lists included) it read, per event
	 * it handled
	 * @param rows per instance: the rows it read, by table
	 */
	private record Round(double eventsPerSecond, List<Double> rowsPerEvent, List<String> rows) {
	}

	/**
	 * @param bucketing the tag layout: {@link TagBucketing#NONE} (the reference {@code events_by_tag}) or a
	 * bucketed one
	 * @return per number of instances, 1 to 3: the throughput (the 2 and 3 results carry the ratio to 1 in the
	 * note), then the rows read per event handled (the mean over the instances, per round)
	 */
	List<Result> throughput(TagBucketing bucketing) {
		return throughput(bucketing, 0);
	}

	/**
	 * @param bucketing the tag layout
	 * @param sliceGroups the segment-aware tag index's groups ({@code tag-slice-groups}), 0 for none
	 * @return as {@link #throughput(TagBucketing)}, named {@code projection-shared-sliced<groups>-...} (with buckets
	 * {@code projection-shared-<unit>-sliced<groups>-...})
	 */
	List<Result> throughput(TagBucketing bucketing, int sliceGroups) {
		CassandraJournalOptions options = this.reads.options().withTagBucketing(bucketing);
		if (sliceGroups > 0) {
			options = options.withTagSliceGroups(sliceGroups);
		}
		String bucketed = (bucketing == TagBucketing.NONE) ? "" : "-" + bucketing.tableSuffix();
		String layout = bucketed + ((sliceGroups > 0) ? "-sliced" + sliceGroups : "");
		String layoutName = (sliceGroups == 0) ? bucketing.toString()
				: ((bucketing == TagBucketing.NONE) ? "" : bucketing + " + ") + "tag-slice-groups " + sliceGroups;
		List<Result> results = new ArrayList<>();
		List<Double> single = List.of();
		for (int instances = 1; instances <= 3; instances++) {
			List<Double> rounds = new ArrayList<>();
			List<Double> amplification = new ArrayList<>();
			List<String> perInstance = new ArrayList<>();
			for (int round = 0; round < this.bench.sizes().rounds(); round++) {
				Round r = round(options, instances, round);
				rounds.add(r.eventsPerSecond());
				amplification.add(r.rowsPerEvent().stream().mapToDouble(Double::doubleValue).average().orElse(0));
				perInstance.add(r.rowsPerEvent().stream().map((x) -> String.format("%.1f", x)).toList() + " " + r.rows());
			}
			if (instances == 1) {
				single = rounds;
			}
			double ratio = Stats.median(rounds) / Stats.median(single);
			results.add(new Result("projection-shared" + layout + "-" + instances, "events/s", Stats.median(rounds), null,
					null, null, null, null, String.format("%d instance(s) in one JVM, %d segments, tag layout %s, handler "
							+ "waits %d ms per event (async); %.2f x one instance", instances, SEGMENTS, layoutName,
							HANDLER_WAIT.toMillis(), ratio),
					List.copyOf(rounds), List.of()));
			System.out.println("projection-shared" + layout + "-reads-" + instances + ": " + perInstance);
			results.add(new Result("projection-shared" + layout + "-reads-" + instances, "rows/event",
					Stats.median(amplification), null, null, null, null, null, String.format("tag index rows each of %d "
							+ "instance(s) read per event it handled (mean over instances; per round, per instance, and "
							+ "rows by table: %s); %d segments, tag layout %s", instances, perInstance, SEGMENTS, layoutName),
					List.copyOf(amplification), List.of()));
		}
		return results;
	}

	private Round round(CassandraJournalOptions options, int instances, int round) {
		int events = this.bench.sizes().projectionEvents();
		String tag = "shared-" + instances + "-" + round + "-" + System.nanoTime();
		String name = "bench-" + tag;
		CountDownLatch done = new CountDownLatch(events);
		CassandraJournal journal = CassandraJournal.create(this.bench.session(), options, this.bench.serializer());
		List<ProjectionEngine> engines = new ArrayList<>();
		List<CountingSession> sessions = new ArrayList<>();
		List<AtomicLong> handled = new ArrayList<>();
		try {
			for (int i = 0; i < instances; i++) {
				CountingSession counting = new CountingSession(this.bench.session());
				AtomicLong calls = new AtomicLong();
				sessions.add(counting);
				handled.add(calls);
				ProjectionEngine engine = ProjectionEngine.builder(journal)
					.readJournal(CassandraReadJournal.create(journal, counting.session(), options, this.bench.serializer()))
					.offsetStore(new DurableStateOffsetStore(this.state))
					.sharing(ProjectionSharing.create(this.bench.session(), options)
						.withInstanceId(tag + "-instance-" + i)
						.withLeaseTiming(Duration.ofSeconds(3), Duration.ofMillis(500)))
					.build();
				engines.add(engine);
				engine.register(Projection.byTag(name, TagFilter.tag(tag), String.class, (EventHandler<String>) (event) -> {
					calls.incrementAndGet();
					return CompletableFuture.runAsync(done::countDown, IO_WAIT);
				}, ProjectionSettings.defaults().withSegments(SEGMENTS).withPollInterval(Duration.ofMillis(100))));
			}
			for (ProjectionEngine engine : engines) {
				Bench.join(engine.startAll());
			}
			awaitSpread(engines, name);
			// Rows of every tag index table: the name is a prefix of the bucketed and sliced tables' names.
			List<Long> before = sessions.stream().map((s) -> s.rows(options.tagIndexTable())).toList();
			long started = System.nanoTime();
			append(journal, tag, events);
			try {
				if (!done.await(10, TimeUnit.MINUTES)) {
					throw new IllegalStateException("shared projection did not finish");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			double rate = events / ((System.nanoTime() - started) / 1e9);
			List<Double> perEvent = new ArrayList<>();
			List<String> rows = new ArrayList<>();
			for (int i = 0; i < instances; i++) {
				long read = sessions.get(i).rows(options.tagIndexTable()) - before.get(i);
				if (handled.get(i).get() > 0) {
					// An instance that handled nothing (its segments got no entity: smoke sizes) has no ratio.
					perEvent.add(read / (double) handled.get(i).get());
				}
				rows.add(handled.get(i).get() + " handled, " + sessions.get(i).rowsByTable());
			}
			return new Round(rate, perEvent, rows);
		}
		finally {
			engines.forEach(ProjectionEngine::close);
		}
	}

	/**
	 * @return the persistenceId of entity {@code n}: a name-based UUID after the tag. The slice function of
	 * keyspaces recorded before {@code slice-hash} ({@code |hashCode % 1024|}) keeps ids that differ only in a short
	 * counted suffix within a few hundred slices of each other, that is in a few neighbouring segments;
	 * random-looking ids spread over all of them with either function, so figures stay comparable.
	 */
	static String entity(String tag, int n) {
		return tag + "-" + UUID.nameUUIDFromBytes((tag + "#" + n).getBytes(StandardCharsets.UTF_8));
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

	/**
	 * Appends the events over 64 persistenceIds, 100 per append. The ids are name-based UUIDs, so that they fall in
	 * most of the 16 segments: ids that differ only in a counted suffix ({@code tag-0} to {@code tag-63}) have
	 * hash codes close together and fell in 4 or 5 of the 16 segments (see {@link #entity}).
	 */
	private static void append(CassandraJournal journal, String tag, int events) {
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
				inFlight.add(journal.append(entity(tag, p), heads[p], batch).toCompletableFuture());
				heads[p] += n;
				written += n;
			}
			inFlight.forEach(CompletableFuture::join);
			inFlight.clear();
		}
	}

}
