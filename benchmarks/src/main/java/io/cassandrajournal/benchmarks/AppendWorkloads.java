package io.cassandrajournal.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.DoubleSupplier;

import org.HdrHistogram.Histogram;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;

/**
 * Append workloads: throughput with and without LWT, sequential latency, and the in-flight scaling curve.
 * Both sides write to their own fresh persistenceIds every round, so neither inherits the other's
 * partitions.
 */
final class AppendWorkloads {

	private final Bench bench;

	private final RawJournal raw;

	private final CassandraJournal lwt;

	private final CassandraJournal noLwt;

	private int run;

	AppendWorkloads(Bench bench) {
		this.bench = bench;
		this.lwt = CassandraJournal.create(bench.session(), bench.options(), bench.serializer());
		CassandraJournalOptions unsafe = bench.options().withLightweightTransactions(false);
		this.noLwt = CassandraJournal.create(bench.session(), unsafe, bench.serializer());
		this.raw = new RawJournal(bench.session(), bench.options());
	}

	private static List<EventToAppend> events(int count) {
		List<EventToAppend> events = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			events.add(EventToAppend.of(new Deposited(25)));
		}
		return events;
	}

	/** The payload, serialized to exactly {@link Bench#PAYLOAD}. */
	record Deposited(String kind, long amount) {

		Deposited(long amount) {
			this("deposited", amount);
		}

	}

	/** @return appends per second */
	double ours(CassandraJournal journal, int appends, int pids, int eventsPerAppend, int inFlight) {
		String prefix = "ours-" + (this.run++) + "-";
		AtomicLongArray heads = new AtomicLongArray(pids);
		List<EventToAppend> events = events(eventsPerAppend);
		PerKeyOrder order = new PerKeyOrder(pids);
		// Append i goes to pid i % pids; appends to one pid are chained, so expected sequence numbers are known
		// without reading the head and no append conflicts.
		long nanos = Bench.run(appends, inFlight, (i) -> {
			int p = i % pids;
			long expected = heads.getAndAdd(p, eventsPerAppend);
			return order.after(p, () -> journal.append(prefix + p, expected, events));
		});
		return appends / (nanos / 1e9);
	}

	/** Runs one side's round inside a {@link Phase} (for profiles). @return the round's figure */
	private static double phase(String workload, String side, int operations, DoubleSupplier round) {
		Phase phase = Phase.begin(workload, side);
		double figure = round.getAsDouble();
		phase.end(operations);
		return figure;
	}

	/** What the raw side sends per append. */
	enum RawWrite {

		/** LWT claim, then the events batch (and the id row for a new persistenceId): as ours with LWT. */
		LWT,

		/**
		 * As ours without LWT: the head read on a persistenceId's first append, then the events batch carrying
		 * the head update (and the id row).
		 */
		WITH_HEAD,

		/** The cheapest possible write: the events batch alone (and the id row). */
		BATCH_ONLY

	}

	/** @return appends per second */
	double raw(RawWrite kind, int appends, int pids, int eventsPerAppend, int inFlight) {
		String prefix = "raw-" + (this.run++) + "-";
		AtomicLongArray heads = new AtomicLongArray(pids);
		PerKeyOrder order = new PerKeyOrder(pids);
		long nanos = Bench.run(appends, inFlight, (i) -> {
			int p = i % pids;
			long expected = heads.getAndAdd(p, eventsPerAppend);
			return order.after(p, () -> switch (kind) {
				case LWT -> this.raw.append(prefix + p, expected, eventsPerAppend);
				case WITH_HEAD -> this.raw.writeWithHead(prefix + p, expected, eventsPerAppend, System.currentTimeMillis());
				case BATCH_ONLY -> this.raw.write(prefix + p, expected, eventsPerAppend, System.currentTimeMillis());
			});
		});
		return appends / (nanos / 1e9);
	}

	Result throughput(String name, int eventsPerAppend, int appends) {
		List<Double> ours = new ArrayList<>();
		List<Double> raws = new ArrayList<>();
		int pids = this.bench.sizes().persistenceIds();
		this.bench.rounds((round) -> {
			// Alternate which side goes first, so neither always meets a fresher (or busier) node.
			if (round % 2 == 0) {
				ours.add(phase(name, "ours", appends, () -> ours(this.lwt, appends, pids, eventsPerAppend, 64)));
				raws.add(phase(name, "raw", appends, () -> raw(RawWrite.LWT, appends, pids, eventsPerAppend, 64)));
			}
			else {
				raws.add(phase(name, "raw", appends, () -> raw(RawWrite.LWT, appends, pids, eventsPerAppend, 64)));
				ours.add(phase(name, "ours", appends, () -> ours(this.lwt, appends, pids, eventsPerAppend, 64)));
			}
		}, ours, raws);
		return Result.of(name, "ops/s", ours, raws,
				"64 in flight over " + pids + " persistenceIds; bounded by Paxos rounds (4 round trips per claim)");
	}

	/** The other side of the price row {@code append-nolwt-1-cheapest}, as the report names it. */
	static final String CHEAPEST_WRITE = "raw cheapest write (events batch alone, no head)";

	/**
	 * Appends without LWT, one event each, measured three ways in the same rounds (the order rotating): ours,
	 * the raw driver sending the same requests (head read on a persistenceId's first append, events batch
	 * carrying the head), and the cheapest possible raw write (the events batch alone).
	 * @return {@code append-nolwt-1} (ours against the same requests: our overhead) and
	 * {@code append-nolwt-1-cheapest} (ours against the batch alone: the price of keeping the head, a
	 * {@linkplain Result#price price row})
	 */
	List<Result> throughputWithoutLwt(int appends) {
		List<Double> ours = new ArrayList<>();
		List<Double> sameRequests = new ArrayList<>();
		List<Double> batchOnly = new ArrayList<>();
		int pids = this.bench.sizes().persistenceIds();
		this.bench.rounds((round) -> {
			for (int side = 0; side < 3; side++) {
				switch ((round + side) % 3) {
					case 0 -> ours.add(phase("append-nolwt-1", "ours", appends, () -> ours(this.noLwt, appends, pids, 1, 64)));
					case 1 -> sameRequests.add(phase("append-nolwt-1", "raw", appends,
							() -> raw(RawWrite.WITH_HEAD, appends, pids, 1, 64)));
					default -> batchOnly.add(phase("append-nolwt-1", "raw-cheapest", appends,
							() -> raw(RawWrite.BATCH_ONLY, appends, pids, 1, 64)));
				}
			}
		}, ours, sameRequests, batchOnly);
		return List.of(
				Result.of("append-nolwt-1", "ops/s", ours, sameRequests, "64 in flight; raw sends what ours sends: "
						+ "the head read on a persistenceId's first append, the events batch carrying the metadata head"),
				Result.of("append-nolwt-1-cheapest", "ops/s", ours, batchOnly, "the same rounds' ours against the "
						+ "cheapest raw write, the events batch alone: the price of keeping the head")
					.price(CHEAPEST_WRITE));
	}

	/**
	 * Sequential appends to one persistenceId, ours against the raw claim + batch, under {@link Bench#rounds}
	 * like the throughput workloads: in a full run a dropped warm-up round first (until 2026-12-04, session 20,
	 * this workload had none, and its first round met a cold JIT and a node just started), then more rounds
	 * while a side's per-round p50 spreads over 20%; the side that goes first alternates by round (before, ours
	 * always went first).
	 */
	Result latency() {
		int samples = this.bench.sizes().latencySamples();
		List<Histogram> ours = new ArrayList<>();
		List<Histogram> raws = new ArrayList<>();
		// Each round's p50, in ms: the figures the rounds rule reads (it trims the warm-up's from these two).
		List<Double> oursP50 = new ArrayList<>();
		List<Double> rawP50 = new ArrayList<>();
		this.bench.rounds((round) -> Bench.alternate(round, () -> {
			Histogram o = Stats.histogram();
			String pid = "latency-ours-" + (this.run++);
			List<EventToAppend> one = events(1);
			Phase phase = Phase.begin("append-latency", "ours");
			for (int i = 0; i < samples; i++) {
				long started = System.nanoTime();
				Bench.join(this.lwt.append(pid, i, one));
				o.recordValue(System.nanoTime() - started);
			}
			phase.end(samples);
			ours.add(o);
			oursP50.add(Stats.ms(o, 50));
		}, () -> {
			Histogram r = Stats.histogram();
			String rawPid = "latency-raw-" + (this.run++);
			Phase phase = Phase.begin("append-latency", "raw");
			for (int i = 0; i < samples; i++) {
				long started = System.nanoTime();
				Bench.join(this.raw.append(rawPid, i, 1));
				r.recordValue(System.nanoTime() - started);
			}
			phase.end(samples);
			raws.add(r);
			rawP50.add(Stats.ms(r, 50));
		}), oursP50, rawP50);
		// The histograms of the measured rounds: the warm-up's is the first of each list in a full run.
		Histogram o = median(Bench.measured(ours, oursP50.size()));
		Histogram r = median(Bench.measured(raws, rawP50.size()));
		this.latencyHistograms = List.of(o, r);
		// The spread in the JSON is that of each round's p50.
		return new Result("append-latency", "ms", Stats.ms(o, 50), Stats.ms(r, 50), Stats.ms(o, 50), Stats.ms(o, 99),
				Stats.ms(r, 50), Stats.ms(r, 99), "one persistenceId, sequential; p999 ours " + String.format("%.2f", Stats.ms(o, 99.9))
						+ " ms, raw " + String.format("%.2f", Stats.ms(r, 99.9)) + " ms; min/median/max are of the rounds' p50; "
						+ "p50/p99 are those of the round whose p50 is the median",
				List.copyOf(oursP50), List.copyOf(rawP50));
	}

	List<Histogram> latencyHistograms = List.of();

	CassandraJournal lwtJournal() {
		return this.lwt;
	}

	/** @return the round whose p50 is the median */
	private static Histogram median(List<Histogram> rounds) {
		List<Histogram> sorted = new ArrayList<>(rounds);
		Collections.sort(sorted, (a, b) -> Long.compare(a.getValueAtPercentile(50), b.getValueAtPercentile(50)));
		return sorted.get(sorted.size() / 2);
	}

	/**
	 * @return one result per in-flight level, and the curve for the chart
	 */
	List<Result> scaling(List<double[]> curve) {
		List<Result> results = new ArrayList<>();
		int appends = this.bench.sizes().scalingAppends();
		for (int inFlight : new int[] { 1, 4, 16, 64, 256 }) {
			List<Double> ours = new ArrayList<>();
			List<Double> raws = new ArrayList<>();
			int count = Math.max(appends / (inFlight == 1 ? 8 : 1), inFlight * 4);
			int pids = Math.max(this.bench.sizes().persistenceIds(), inFlight * 4);
			this.bench.rounds((round) -> {
				String name = "scaling-" + inFlight;
				int n = count;
				int flight = inFlight;
				if (round % 2 == 0) {
					ours.add(phase(name, "ours", n, () -> ours(this.lwt, n, pids, 1, flight)));
					raws.add(phase(name, "raw", n, () -> raw(RawWrite.LWT, n, pids, 1, flight)));
				}
				else {
					raws.add(phase(name, "raw", n, () -> raw(RawWrite.LWT, n, pids, 1, flight)));
					ours.add(phase(name, "ours", n, () -> ours(this.lwt, n, pids, 1, flight)));
				}
			}, ours, raws);
			Result result = Result.of("scaling-" + inFlight, "ops/s", ours, raws,
					"append-lwt-1 with " + inFlight + " in flight");
			curve.add(new double[] { inFlight, result.ours(), result.raw() });
			results.add(result);
		}
		return results;
	}

}
