package io.cassandrajournal.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

import org.HdrHistogram.Histogram;

import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.state.CassandraDurableStateStore;

/**
 * End-to-end push latency while appends run ({@code end-to-end-push-loaded}): a by-tag projection with the
 * default settings (push on, poll interval 10 s as in {@code end-to-end-push}) handles a steady load of
 * appends of its tag (one event each, spread over 64 entities, at a fixed rate with at most 32 in flight) and,
 * between them, sequential probe appends of one entity; per probe, append start to handler call. Its reads and
 * offset saves go through a {@link TimingSession}, so each probe's wait after its append completed is taken
 * apart: which tag reads and offset saves ran in between.
 */
final class LoadedEndToEnd {

	private static final int LOAD_ENTITIES = 64;

	private static final int LOAD_IN_FLIGHT = 32;

	private static final String TAG_READ = "SELECT events_by_tag";

	private static final String OFFSET_SAVE = "UPDATE durable_state";

	/** A tag read whose upper bound lies this far behind the clock is the trailing sweep's (10 s behind). */
	private static final long SWEEP_BEHIND_MILLIS = 5_000;

	private final Bench bench;

	private final ReadWorkloads reads;

	private final int loadPerSecond;

	LoadedEndToEnd(Bench bench, ReadWorkloads reads, int loadPerSecond) {
		this.bench = bench;
		this.reads = reads;
		this.loadPerSecond = loadPerSecond;
	}

	/** One probe: when its append started and completed, and when the handler saw it. */
	private record Probe(long started, long appended, long handled) {
	}

	/**
	 * One round's counts over its measured window (from the first probe to the last).
	 * @param seconds the window's length
	 * @param wakeUps appends of the projection's tag completed in the window (load and probes): each wakes it
	 * @param handled events the handler saw in the window
	 */
	private record Round(List<Probe> probes, List<TimingSession.Call> calls, double loadRate, long skipped,
			double seconds, long wakeUps, long handled) {
	}

	/**
	 * Runs {@code sizes.rounds()} rounds, each with a projection of its own (a new tag), and reports the probes of
	 * all rounds together, with each round's p50, p99 and maximum and its request counts in the note.
	 */
	List<Result> run(List<Histogram> distributions) {
		List<Round> rounds = new ArrayList<>();
		for (int i = 0; i < this.bench.sizes().rounds(); i++) {
			rounds.add(round());
		}
		return results(rounds, distributions);
	}

	private Round round() {
		String tag = "e2e-load-" + System.nanoTime();
		String probePid = tag + "-probe";
		CassandraJournal journal = this.reads.journal();
		TimingSession timed = new TimingSession(this.bench.session());
		CassandraReadJournal query = CassandraReadJournal.create(journal, timed.session(), this.reads.options(),
				this.bench.serializer());
		CassandraDurableStateStore state = CassandraDurableStateStore.create(timed.session(), this.reads.options(),
				this.bench.serializer());
		// The probe waits parked, not spinning: on 2 cores a spinning client would take a core from the node.
		Map<Long, CompletableFuture<Long>> seenAt = new ConcurrentHashMap<>();
		LongAdder handled = new LongAdder();
		List<Probe> probes = new ArrayList<>();
		Load load = new Load(journal, tag, this.loadPerSecond);
		try (ProjectionEngine engine = ProjectionEngine.builder(journal)
			.readJournal(query)
			.offsetStore(new DurableStateOffsetStore(state))
			.threads(2)
			.build()) {
			ProjectionControl control = engine.register(Projection.byTag("e2e-" + tag, TagFilter.tag(tag), String.class,
					(EventHandler<String>) (event) -> {
						if (probePid.equals(event.persistenceId())) {
							seenAt.computeIfAbsent(event.sequenceNr(), (n) -> new CompletableFuture<>())
								.complete(System.nanoTime());
						}
						handled.increment();
						return CompletableFuture.completedFuture(null);
					}, ProjectionSettings.defaults().withPollInterval(Duration.ofSeconds(10))));
			Bench.join(control.start());
			load.start();
			// Warm-up: the projection follows the load for a second before the first probe.
			waitUntil(() -> handled.sum() >= Math.max(10, this.loadPerSecond), "the projection to follow the load");
			timed.recording(true);
			long loadFrom = load.completed();
			long handledFrom = handled.sum();
			long from = System.nanoTime();
			long head = 0;
			for (int i = 0; i < this.bench.sizes().endToEndSamples(); i++) {
				CompletableFuture<Long> seen = seenAt.computeIfAbsent(head + 1, (n) -> new CompletableFuture<>());
				long started = System.nanoTime();
				head = Bench.join(journal.append(probePid, head,
						List.of(EventToAppend.of(new AppendWorkloads.Deposited(1), tag)))).lastSequenceNr();
				long appended = System.nanoTime();
				probes.add(new Probe(started, appended, handledAt(seen, head)));
				sleep(5);
			}
			double seconds = (System.nanoTime() - from) / 1e9;
			long loadAppends = load.completed() - loadFrom;
			long handledInWindow = handled.sum() - handledFrom;
			timed.recording(false);
			load.stop();
			return new Round(probes, timed.calls(), loadAppends / seconds, load.skipped(), seconds,
					loadAppends + probes.size(), handledInWindow);
		}
		finally {
			load.stop();
		}
	}

	private List<Result> results(List<Round> rounds, List<Histogram> distributions) {
		Histogram total = Stats.histogram();
		Histogram append = Stats.histogram();
		Histogram after = Stats.histogram();
		Histogram afterNoSave = Stats.histogram();
		Histogram afterSave = Stats.histogram();
		Histogram readsBetween = new Histogram(3);
		Histogram tagReads = Stats.histogram();
		Histogram saves = Stats.histogram();
		List<Double> p99s = new ArrayList<>();
		List<String> perRound = new ArrayList<>();
		double loadRate = 0;
		long skipped = 0;
		for (Round round : rounds) {
			Histogram roundTotal = Stats.histogram();
			for (Probe probe : round.probes()) {
				roundTotal.recordValue(probe.handled - probe.started);
				append.recordValue(probe.appended - probe.started);
				long wait = Math.max(0, probe.handled - probe.appended);
				after.recordValue(wait);
				int reads = 0;
				int savesMeanwhile = 0;
				for (TimingSession.Call call : round.calls()) {
					if (call.startNanos() >= probe.handled) {
						break;
					}
					if (call.kind().equals(TAG_READ) && call.startNanos() >= probe.appended) {
						reads++;
					}
					if (call.kind().equals(OFFSET_SAVE) && call.endNanos() > probe.appended) {
						savesMeanwhile++;
					}
				}
				readsBetween.recordValue(reads);
				(savesMeanwhile > 0 ? afterSave : afterNoSave).recordValue(wait);
			}
			total.add(roundTotal);
			long headReads = 0;
			long sweepReads = 0;
			long otherReads = 0;
			long rows = 0;
			long roundSaves = 0;
			for (TimingSession.Call call : round.calls()) {
				if (call.kind().equals(TAG_READ)) {
					tagReads.recordValue(call.endNanos() - call.startNanos());
					rows += call.rows();
					if (call.behindMillis() < 0) {
						otherReads++;
					}
					else if (call.behindMillis() >= SWEEP_BEHIND_MILLIS) {
						sweepReads++;
					}
					else {
						headReads++;
					}
				}
				else if (call.kind().equals(OFFSET_SAVE)) {
					saves.recordValue(call.endNanos() - call.startNanos());
					roundSaves++;
				}
			}
			double s = round.seconds();
			p99s.add(Stats.ms(roundTotal, 99));
			perRound.add(String.format(Locale.ROOT,
					"p50 %.1f / p99 %.1f / max %.1f ms over %.1f s: %.0f wake-ups/s, %.0f head reads/s, %.0f sweep "
							+ "reads/s, %d other tag reads, %.0f offset saves/s, %.2f rows read per event handled",
					Stats.ms(roundTotal, 50), Stats.ms(roundTotal, 99), roundTotal.getMaxValue() / 1e6, s,
					round.wakeUps() / s, headReads / s, sweepReads / s, otherReads, roundSaves / s,
					(double) rows / Math.max(1, round.handled())));
			loadRate += round.loadRate() / rounds.size();
			skipped += round.skipped();
		}
		String breakdown = String.format(Locale.ROOT,
				"load %.0f appends/s of the projection's tag (asked %d, %d ticks skipped at %d in flight); probe's own "
						+ "append p50 %.1f / p99 %.1f ms; append completed to handler p50 %.1f / p99 %.1f ms: %d probes "
						+ "with an offset save in flight or started meanwhile (p50 %.1f / p99 %.1f ms), %d without "
						+ "(p50 %.1f / p99 %.1f ms); tag reads started meanwhile p50 %d / p99 %d; the projection's tag "
						+ "reads p50 %.1f / p99 %.1f ms (%d), offset saves p50 %.1f / p99 %.1f ms (%d); max %.1f ms; "
						+ "rounds: %s",
				loadRate, this.loadPerSecond, skipped, LOAD_IN_FLIGHT, Stats.ms(append, 50), Stats.ms(append, 99),
				Stats.ms(after, 50), Stats.ms(after, 99), afterSave.getTotalCount(), Stats.ms(afterSave, 50),
				Stats.ms(afterSave, 99), afterNoSave.getTotalCount(), Stats.ms(afterNoSave, 50), Stats.ms(afterNoSave, 99),
				readsBetween.getValueAtPercentile(50), readsBetween.getValueAtPercentile(99), Stats.ms(tagReads, 50),
				Stats.ms(tagReads, 99), tagReads.getTotalCount(), Stats.ms(saves, 50), Stats.ms(saves, 99),
				saves.getTotalCount(), total.getMaxValue() / 1e6, String.join("; ", perRound));
		System.out.println("end-to-end-push-loaded: " + breakdown);
		distributions.add(total);
		List<Result> results = new ArrayList<>();
		results.add(new Result("end-to-end-push-loaded", "ms", Stats.ms(total, 50), null, Stats.ms(total, 50),
				Stats.ms(total, 99), null, null, "append start to handler, same process, push, while " + breakdown,
				List.copyOf(p99s), List.of()));
		results.add(new Result("end-to-end-push-loaded-max", "ms", total.getMaxValue() / 1e6, null, null, null, null,
				null, "the slowest probe of all rounds, append start to handler (end-to-end-push-loaded)"));
		results.add(new Result("end-to-end-push-loaded-after-append", "ms", Stats.ms(after, 50), null,
				Stats.ms(after, 50), Stats.ms(after, 99), null, null,
				"the probe's append completed to handler (the library's part of end-to-end-push-loaded)"));
		results.add(new Result("end-to-end-push-loaded-append", "ms", Stats.ms(append, 50), null, Stats.ms(append, 50),
				Stats.ms(append, 99), null, null, "the probe's append alone, under the same load"));
		return results;
	}

	/** Appends of the tag at a fixed rate, one event each, over 64 entities, at most 32 in flight. */
	private static final class Load {

		private final CassandraJournal journal;

		private final String tag;

		private final int perSecond;

		private final Semaphore permits = new Semaphore(LOAD_IN_FLIGHT);

		private final AtomicLongArray heads = new AtomicLongArray(LOAD_ENTITIES);

		private final PerKeyOrder order = new PerKeyOrder(LOAD_ENTITIES);

		private final AtomicLong issued = new AtomicLong();

		private final AtomicLong completed = new AtomicLong();

		private final AtomicLong skipped = new AtomicLong();

		private final AtomicReference<Throwable> failure = new AtomicReference<>();

		private final ScheduledExecutorService ticker = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "e2e-load");
			thread.setDaemon(true);
			return thread;
		});

		private boolean stopped;

		Load(CassandraJournal journal, String tag, int perSecond) {
			this.journal = journal;
			this.tag = tag;
			this.perSecond = perSecond;
		}

		void start() {
			this.ticker.scheduleAtFixedRate(this::tick, 0, 1_000_000_000L / this.perSecond, TimeUnit.NANOSECONDS);
		}

		private void tick() {
			if (this.failure.get() != null || !this.permits.tryAcquire()) {
				this.skipped.incrementAndGet();
				return;
			}
			int p = (int) (this.issued.getAndIncrement() % LOAD_ENTITIES);
			long expected = this.heads.getAndIncrement(p);
			this.order.after(p, () -> this.journal.append(this.tag + "-load-" + p, expected,
					List.of(EventToAppend.of(new AppendWorkloads.Deposited(1), this.tag)))).whenComplete((ok, error) -> {
						if (error != null) {
							this.failure.compareAndSet(null, error);
						}
						else {
							this.completed.incrementAndGet();
						}
						this.permits.release();
					});
		}

		long completed() {
			return this.completed.get();
		}

		long skipped() {
			return this.skipped.get();
		}

		/** Stops issuing, waits for the appends in flight, and fails if any append failed. */
		void stop() {
			if (this.stopped) {
				return;
			}
			this.stopped = true;
			this.ticker.shutdownNow();
			try {
				if (!this.permits.tryAcquire(LOAD_IN_FLIGHT, 60, TimeUnit.SECONDS)) {
					throw new IllegalStateException("load appends did not complete within 60 s");
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			if (this.failure.get() != null) {
				throw new IllegalStateException("a load append failed", this.failure.get());
			}
		}

	}

	private static long handledAt(CompletableFuture<Long> seen, long sequenceNr) {
		try {
			return seen.get(30, TimeUnit.SECONDS);
		}
		catch (java.util.concurrent.TimeoutException ex) {
			throw new IllegalStateException("probe " + sequenceNr + " did not reach the handler within 30 s", ex);
		}
		catch (java.util.concurrent.ExecutionException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Waits (not measured) for a condition, looking every millisecond, at most 30 s. */
	private static void waitUntil(java.util.function.BooleanSupplier condition, String what) {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("waited 30 s for " + what);
			}
			sleep(1);
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
