package io.cassandrajournal.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.HdrHistogram.Histogram;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionHandler;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.state.CassandraDurableStateStore;

/**
 * Projection workloads: throughput of a by-tag projection with a no-op handler and durable offsets (raw: the
 * same tag pages plus an offset write per page), and append-to-handler latency with push and with polling.
 */
final class ProjectionWorkloads {

	private final Bench bench;

	private final ReadWorkloads reads;

	private final CassandraDurableStateStore state;

	ProjectionWorkloads(Bench bench, ReadWorkloads reads) {
		this.bench = bench;
		this.reads = reads;
		this.state = CassandraDurableStateStore.create(bench.session(), reads.options(), bench.serializer());
	}

	private ProjectionEngine engine() {
		return engine(new SimpleMeterRegistry());
	}

	private ProjectionEngine engine(MeterRegistry meters) {
		return ProjectionEngine.builder(this.reads.journal())
			.readJournal(this.reads.query())
			.offsetStore(new DurableStateOffsetStore(this.state))
			.meterRegistry(meters)
			.threads(2)
			.build();
	}

	/**
	 * @param pageSize the projection's batch: rows per read, and so events per offset save (the raw side reads
	 * and saves the same)
	 * @return {@code projection} for the default batch of 100, {@code projection-batch-<n>} for others
	 */
	Result throughput(int pageSize) {
		int events = this.bench.sizes().projectionEvents();
		String tag = "proj-" + System.nanoTime();
		for (int p = 0; p < 10; p++) {
			long head = 0;
			while (head < events / 10) {
				int n = (int) Math.min(500, events / 10 - head);
				List<EventToAppend> batch = new ArrayList<>();
				for (int i = 0; i < n; i++) {
					batch.add(EventToAppend.of(new AppendWorkloads.Deposited(1), tag));
				}
				head = Bench.join(this.reads.journal().append(tag + "-" + p, head, batch)).lastSequenceNr();
			}
		}
		String name = (pageSize == 100) ? "projection" : "projection-batch-" + pageSize;
		CassandraJournalOptions options = this.reads.options();
		PreparedStatement page = this.bench.session().prepare(SimpleStatement.newInstance("SELECT timestamp, persistence_id, "
				+ "sequence_nr, payload, tags FROM " + options.requireKeyspace() + ".events_by_tag WHERE tag = ? AND "
				+ "(timestamp, persistence_id, sequence_nr) > (?, ?, ?) LIMIT ?").setConsistencyLevel(options.consistency()));
		PreparedStatement saveOffset = this.bench.session().prepare(SimpleStatement.newInstance("UPDATE "
				+ options.requireKeyspace() + ".durable_state SET revision = ?, payload = ?, updated_at = ? "
				+ "WHERE persistence_id = ? IF revision = ?").setConsistencyLevel(options.consistency()));
		List<Double> ours = new ArrayList<>();
		List<Double> raws = new ArrayList<>();
		List<Double> saves = new ArrayList<>();
		this.bench.rounds((round) -> Bench.alternate(round, () -> {
			CountDownLatch done = new CountDownLatch(events);
			SimpleMeterRegistry meters = new SimpleMeterRegistry();
			try (ProjectionEngine engine = engine(meters)) {
				ProjectionControl control = engine.register(Projection.byTag("bench-" + tag + "-" + round, TagFilter.tag(tag),
						String.class, (ProjectionHandler<String>) (event) -> {
							done.countDown();
							return CompletableFuture.completedFuture(null);
						}, ProjectionSettings.defaults().withFeed(FeedSettings.DEFAULTS.withPageSize(pageSize))));
				Phase phase = Phase.begin(name, "ours");
				long started = System.nanoTime();
				Bench.join(control.start());
				await(done);
				ours.add(events / ((System.nanoTime() - started) / 1e9));
				phase.end(events);
				Bench.join(control.stop());
				saves.add((double) meters.get("persistence.projection.offset.save.duration").timer().count());
			}
		}, () -> {
			// Raw: the same pages of 100 in offset order, and a compare-and-set offset write after each page.
			String key = "raw-offset-" + tag + "-" + round;
			Bench.join(this.state.upsert(key, 1, Map.of("timestamp", 0)));
			Phase phase = Phase.begin(name, "raw");
			long started = System.nanoTime();
			long ts = 0;
			String pid = "";
			long seq = 0;
			long revision = 1;
			long seen = 0;
			while (true) {
				AsyncResultSet rs = Bench.join(this.bench.session().executeAsync(page.bind(tag, ts, pid, seq, pageSize)));
				int rows = 0;
				for (Row row : rs.currentPage()) {
					ts = row.getLong(0);
					pid = row.getString(1);
					seq = row.getLong(2);
					row.getString(3);
					rows++;
				}
				seen += rows;
				if (rows == 0) {
					break;
				}
				String offset = "{\"timestamp\":" + ts + ",\"persistenceId\":\"" + pid + "\",\"sequenceNr\":" + seq + "}";
				Bench.join(this.bench.session().executeAsync(saveOffset.bind(revision + 1, offset, System.currentTimeMillis(),
						key, revision)));
				revision++;
				if (rows < pageSize) {
					break;
				}
			}
			if (seen != events) {
				throw new IllegalStateException("raw projection read " + seen + " events, expected " + events);
			}
			raws.add(events / ((System.nanoTime() - started) / 1e9));
			phase.end(seen);
		}), ours, raws);
		return Result.of(name, "events/s", ours, raws,
				events + " events, no-op handler, durable offset (LWT) stored per page of " + pageSize
						+ " (raw: one save per page; ours: median " + Math.round(Stats.median(Bench.measured(saves, ours.size())))
						+ " offset saves per round, at most one in flight)");
	}

	List<Result> endToEnd(List<Histogram> distributions) {
		List<Result> results = new ArrayList<>();
		for (boolean push : new boolean[] { true, false }) {
			String tag = "e2e-" + (push ? "push-" : "poll-") + System.nanoTime();
			Map<Long, Long> seenAt = new ConcurrentHashMap<>();
			Histogram latency = Stats.histogram();
			// Polling: a second journal instance appends, so its appends wake nothing in the engine's process.
			io.cassandrajournal.journal.CassandraJournal appender = push ? this.reads.journal()
					: io.cassandrajournal.journal.CassandraJournal.create(this.bench.session(), this.reads.options(),
							this.bench.serializer());
			Duration poll = push ? Duration.ofSeconds(10) : Duration.ofMillis(100);
			try (ProjectionEngine engine = engine()) {
				ProjectionControl control = engine.register(Projection.byTag("e2e-" + tag, TagFilter.tag(tag), String.class,
						(ProjectionHandler<String>) (event) -> {
							seenAt.put(event.sequenceNr(), System.nanoTime());
							return CompletableFuture.completedFuture(null);
						}, ProjectionSettings.defaults().withPollInterval(poll)));
				Bench.join(control.start());
				long head = 0;
				for (int i = 0; i < this.bench.sizes().endToEndSamples(); i++) {
					long started = System.nanoTime();
					head = Bench.join(appender.append(tag, head, List.of(EventToAppend.of(new AppendWorkloads.Deposited(1), tag))))
						.lastSequenceNr();
					long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
					while (!seenAt.containsKey(head) && System.nanoTime() < deadline) {
						Thread.onSpinWait();
					}
					Long at = seenAt.get(head);
					if (at == null) {
						throw new IllegalStateException("event " + head + " never reached the handler");
					}
					latency.recordValue(at - started);
					sleep(push ? 5 : 37);
				}
			}
			distributions.add(latency);
			results.add(new Result(push ? "end-to-end-push" : "end-to-end-poll", "ms", Stats.ms(latency, 50), null,
					Stats.ms(latency, 50), Stats.ms(latency, 99), null, null,
					push ? "append start to handler, same process, poll interval 10 s (push wakes the projection)"
							: "append from another journal instance, poll interval 100 ms"));
		}
		return results;
	}

	private static void await(CountDownLatch latch) {
		try {
			if (!latch.await(10, TimeUnit.MINUTES)) {
				throw new IllegalStateException("projection did not finish");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}


}
