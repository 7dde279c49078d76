package io.cassandrajournal.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.entity.EventSourcedEntity;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.state.CassandraDurableStateStore;

/**
 * Two workloads of issue 17 that users meet: {@code entity-command-cached}, a command on an entity whose state is
 * in the repository's cache ({@link EntityRepository#execute}: no load, the LWT claim and the events batch) against
 * the raw driver sending the same claim and batch; and {@code projection-lanes-8-io}, a by-tag projection with
 * {@code concurrency = 8} whose handler waits 2 ms per event (I/O bound), against the same handler in a raw loop:
 * the same pages, each page's events on 8 single-threaded workers by persistenceId, the offset written (a
 * compare-and-set) after each page. Both short: a few seconds per round.
 */
final class CommandAndLaneWorkloads {

	private static final int COMMAND_ENTITIES = 64;

	private static final int COMMANDS_IN_FLIGHT = 16;

	private static final int LANES = 8;

	private static final long HANDLER_MILLIS = 2;

	private static final int PAGE = 100;

	private final Bench bench;

	private final ReadWorkloads reads;

	private final RawJournal raw;

	private int run;

	CommandAndLaneWorkloads(Bench bench, ReadWorkloads reads) {
		this.bench = bench;
		this.reads = reads;
		this.raw = new RawJournal(bench.session(), bench.options());
	}

	/** An entity's state: the sum of its deposits. */
	record Balance(long amount) {
	}

	/** A bank account folding {@link AppendWorkloads.Deposited} events. */
	static final class Account implements EventSourcedEntity<Balance, AppendWorkloads.Deposited> {

		@Override
		public Balance emptyState() {
			return new Balance(0);
		}

		@Override
		public Balance applyEvent(Balance state, AppendWorkloads.Deposited event) {
			return new Balance(state.amount() + event.amount());
		}

		@Override
		public Class<AppendWorkloads.Deposited> eventType() {
			return AppendWorkloads.Deposited.class;
		}

		@Override
		public Class<Balance> stateType() {
			return Balance.class;
		}

	}

	/** @return {@code entity-command-cached}: commands per second, ours and raw */
	Result entityCommand() {
		int commands = Math.max(this.bench.sizes().scalingAppends() / 2, COMMAND_ENTITIES);
		CassandraJournal journal = CassandraJournal.create(this.bench.session(), this.bench.options(),
				this.bench.serializer());
		List<Double> ours = new ArrayList<>();
		List<Double> raws = new ArrayList<>();
		this.bench.rounds((round) -> Bench.alternate(round, () -> {
			String prefix = "cmd-ours-" + (this.run++) + "-";
			EntityRepository<Balance, AppendWorkloads.Deposited> repository = EntityRepository
				.create(journal, null, new Account(), 3)
				.withCache(COMMAND_ENTITIES);
			// Not measured: one command per entity first, so every measured command finds its entity cached.
			for (int p = 0; p < COMMAND_ENTITIES; p++) {
				Bench.join(repository.execute(prefix + p, (state) -> List.of(new AppendWorkloads.Deposited(1))));
			}
			PerKeyOrder order = new PerKeyOrder(COMMAND_ENTITIES);
			Phase phase = Phase.begin("entity-command-cached", "ours");
			long nanos = Bench.run(commands, COMMANDS_IN_FLIGHT, (i) -> {
				int p = i % COMMAND_ENTITIES;
				return order.after(p, () -> repository.execute(prefix + p,
						(state) -> List.of(new AppendWorkloads.Deposited(1))));
			});
			phase.end(commands);
			ours.add(commands / (nanos / 1e9));
		}, () -> {
			String prefix = "cmd-raw-" + (this.run++) + "-";
			for (int p = 0; p < COMMAND_ENTITIES; p++) {
				Bench.join(this.raw.append(prefix + p, 0, 1));
			}
			AtomicLongArray heads = new AtomicLongArray(COMMAND_ENTITIES);
			for (int p = 0; p < COMMAND_ENTITIES; p++) {
				heads.set(p, 1);
			}
			PerKeyOrder order = new PerKeyOrder(COMMAND_ENTITIES);
			Phase phase = Phase.begin("entity-command-cached", "raw");
			long nanos = Bench.run(commands, COMMANDS_IN_FLIGHT, (i) -> {
				int p = i % COMMAND_ENTITIES;
				long expected = heads.getAndIncrement(p);
				return order.after(p, () -> this.raw.append(prefix + p, expected, 1));
			});
			phase.end(commands);
			raws.add(commands / (nanos / 1e9));
		}), ours, raws);
		return Result.of("entity-command-cached", "ops/s", ours, raws, commands + " commands of one event over "
				+ COMMAND_ENTITIES + " cached entities, " + COMMANDS_IN_FLIGHT + " in flight (EntityRepository.execute "
				+ "with withCache; raw: the LWT claim and the events batch of the same append)");
	}

	/** @return {@code projection-lanes-8-io}: events per second, ours and raw */
	Result lanesWithIoHandler() {
		int events = Math.max(this.bench.sizes().projectionEvents() / 10, LANES * 4);
		String tag = "lanes-" + System.nanoTime();
		CassandraJournal journal = this.reads.journal();
		// One event per append, round robin over 64 entities: every page holds events of many entities.
		AtomicLongArray heads = new AtomicLongArray(COMMAND_ENTITIES);
		PerKeyOrder seeding = new PerKeyOrder(COMMAND_ENTITIES);
		Bench.run(events, 32, (i) -> {
			int p = i % COMMAND_ENTITIES;
			long expected = heads.getAndIncrement(p);
			return seeding.after(p, () -> journal.append(tag + "-" + p, expected,
					List.of(EventToAppend.of(new AppendWorkloads.Deposited(1), tag))));
		});
		CassandraJournalOptions options = this.reads.options();
		CassandraDurableStateStore state = CassandraDurableStateStore.create(this.bench.session(), options,
				this.bench.serializer());
		PreparedStatement page = this.bench.session().prepare(SimpleStatement.newInstance("SELECT timestamp, persistence_id, "
				+ "sequence_nr, payload, tags FROM " + options.requireKeyspace() + ".events_by_tag WHERE tag = ? AND "
				+ "(timestamp, persistence_id, sequence_nr) > (?, ?, ?) LIMIT ?").setConsistencyLevel(options.consistency()));
		PreparedStatement saveOffset = this.bench.session().prepare(SimpleStatement.newInstance("UPDATE "
				+ options.requireKeyspace() + ".durable_state SET revision = ?, payload = ?, updated_at = ? "
				+ "WHERE persistence_id = ? IF revision = ?").setConsistencyLevel(options.consistency()));
		List<Double> ours = new ArrayList<>();
		List<Double> raws = new ArrayList<>();
		this.bench.rounds((round) -> Bench.alternate(round, () -> {
			CountDownLatch done = new CountDownLatch(events);
			try (ProjectionEngine engine = ProjectionEngine.builder(journal)
				.readJournal(this.reads.query())
				.offsetStore(new DurableStateOffsetStore(state))
				.threads(2)
				.build()) {
				ProjectionControl control = engine.register(Projection.byTag("lanes-" + tag + "-" + round,
						TagFilter.tag(tag), String.class, EventHandler.<String>blocking((event) -> {
							sleep(HANDLER_MILLIS);
							done.countDown();
						}), ProjectionSettings.defaults()
							.withConcurrency(LANES)
							.withFeed(FeedSettings.DEFAULTS.withPageSize(PAGE))));
				Phase phase = Phase.begin("projection-lanes-8-io", "ours");
				long started = System.nanoTime();
				Bench.join(control.start());
				await(done);
				ours.add(events / ((System.nanoTime() - started) / 1e9));
				phase.end(events);
				Bench.join(control.stop());
			}
		}, () -> {
			String key = "raw-lanes-" + tag + "-" + round;
			Bench.join(state.upsert(key, 1, Map.of("timestamp", 0)));
			List<ExecutorService> workers = new ArrayList<>();
			for (int w = 0; w < LANES; w++) {
				workers.add(Executors.newSingleThreadExecutor());
			}
			try {
				Phase phase = Phase.begin("projection-lanes-8-io", "raw");
				long started = System.nanoTime();
				long ts = 0;
				String pid = "";
				long seq = 0;
				long revision = 1;
				long seen = 0;
				while (true) {
					AsyncResultSet rs = Bench.join(this.bench.session().executeAsync(page.bind(tag, ts, pid, seq, PAGE)));
					List<CompletableFuture<Void>> handled = new ArrayList<>();
					for (Row row : rs.currentPage()) {
						ts = row.getLong(0);
						pid = row.getString(1);
						seq = row.getLong(2);
						row.getString(3);
						ExecutorService worker = workers.get(Math.floorMod(pid.hashCode(), LANES));
						handled.add(CompletableFuture.runAsync(() -> sleep(HANDLER_MILLIS), worker));
					}
					if (handled.isEmpty()) {
						break;
					}
					CompletableFuture.allOf(handled.toArray(CompletableFuture[]::new)).join();
					seen += handled.size();
					String offset = "{\"timestamp\":" + ts + ",\"persistenceId\":\"" + pid + "\",\"sequenceNr\":" + seq + "}";
					Bench.join(this.bench.session().executeAsync(saveOffset.bind(revision + 1, offset,
							System.currentTimeMillis(), key, revision)));
					revision++;
					if (handled.size() < PAGE) {
						break;
					}
				}
				if (seen != events) {
					throw new IllegalStateException("raw lanes read " + seen + " events, expected " + events);
				}
				raws.add(events / ((System.nanoTime() - started) / 1e9));
				phase.end(seen);
			}
			finally {
				workers.forEach(ExecutorService::shutdownNow);
			}
		}), ours, raws);
		return Result.of("projection-lanes-8-io", "events/s", ours, raws, events + " events over " + COMMAND_ENTITIES
				+ " entities, handler waits " + HANDLER_MILLIS + " ms per event (I/O bound), concurrency " + LANES
				+ ", pages of " + PAGE + " (raw: the same pages, 8 single-threaded workers by persistenceId, a "
				+ "compare-and-set offset write after each page; at most " + (1000 / HANDLER_MILLIS * LANES)
				+ " events/s)");
	}

	private static void await(CountDownLatch latch) {
		try {
			if (!latch.await(5, TimeUnit.MINUTES)) {
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
