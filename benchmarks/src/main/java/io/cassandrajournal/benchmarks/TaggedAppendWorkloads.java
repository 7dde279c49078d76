package io.cassandrajournal.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.DoubleSupplier;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;

/**
 * The write cost of the segment-aware tag index (issue 15): appends of one tagged event each, with the tag index
 * on, with {@code tag-slice-groups} off and at 16, ours and the raw driver sending the same CQL (the id row on a
 * first append, the LWT claim, one logged batch of the event, its tag row and, sliced, the row's sliced copy).
 * The four sides run in every round, their order rotating; each writes fresh persistenceIds and a fresh tag.
 */
final class TaggedAppendWorkloads {

	/** The sliced layout's slice groups measured: one partition per segment of a 16-segment projection. */
	static final int GROUPS = 16;

	private final Bench bench;

	private final CassandraJournal unsliced;

	private final CassandraJournal sliced;

	private final RawJournal rawUnsliced;

	private final RawJournal rawSliced;

	private int run;

	TaggedAppendWorkloads(Bench bench) {
		this.bench = bench;
		CassandraJournalOptions tagged = bench.options().withUseTagIndex(true);
		// Created first: they create the tag index tables the raw sides prepare their inserts against.
		this.unsliced = CassandraJournal.create(bench.session(), tagged, bench.serializer());
		this.sliced = CassandraJournal.create(bench.session(), tagged.withTagSliceGroups(GROUPS), bench.serializer());
		this.rawUnsliced = new RawJournal(bench.session(), tagged);
		this.rawSliced = new RawJournal(bench.session(), tagged.withTagSliceGroups(GROUPS));
	}

	/** @return appends per second */
	private double ours(CassandraJournal journal, int appends, int pids) {
		String prefix = "tagged-ours-" + (this.run++) + "-";
		String tag = prefix + "tag";
		List<EventToAppend> event = List.of(EventToAppend.of(new AppendWorkloads.Deposited(25), tag));
		AtomicLongArray heads = new AtomicLongArray(pids);
		PerKeyOrder order = new PerKeyOrder(pids);
		long nanos = Bench.run(appends, 64, (i) -> {
			int p = i % pids;
			long expected = heads.getAndAdd(p, 1);
			return order.after(p, () -> journal.append(prefix + p, expected, event));
		});
		return appends / (nanos / 1e9);
	}

	/** @return appends per second */
	private double raw(RawJournal raw, int appends, int pids) {
		String prefix = "tagged-raw-" + (this.run++) + "-";
		String tag = prefix + "tag";
		AtomicLongArray heads = new AtomicLongArray(pids);
		PerKeyOrder order = new PerKeyOrder(pids);
		long nanos = Bench.run(appends, 64, (i) -> {
			int p = i % pids;
			long expected = heads.getAndAdd(p, 1);
			return order.after(p, () -> raw.appendTagged(prefix + p, expected, 1, tag));
		});
		return appends / (nanos / 1e9);
	}

	/**
	 * @return {@code append-tagged} (tag index on, slices off: ours against raw) and {@code append-tagged-sliced}
	 * (tag-slice-groups 16: ours against raw), each note giving the sliced side over the unsliced one
	 */
	List<Result> throughput() {
		int appends = this.bench.sizes().appends() / 2;
		int pids = this.bench.sizes().persistenceIds();
		List<Double> oursOff = new ArrayList<>();
		List<Double> rawOff = new ArrayList<>();
		List<Double> oursOn = new ArrayList<>();
		List<Double> rawOn = new ArrayList<>();
		this.bench.rounds((round) -> {
			for (int side = 0; side < 4; side++) {
				switch ((round + side) % 4) {
					case 0 -> oursOff.add(phase("append-tagged", "ours", appends,
							() -> ours(this.unsliced, appends, pids)));
					case 1 -> rawOff.add(phase("append-tagged", "raw", appends,
							() -> raw(this.rawUnsliced, appends, pids)));
					case 2 -> oursOn.add(phase("append-tagged-sliced", "ours", appends,
							() -> ours(this.sliced, appends, pids)));
					default -> rawOn.add(phase("append-tagged-sliced", "raw", appends,
							() -> raw(this.rawSliced, appends, pids)));
				}
			}
		}, oursOff, rawOff, oursOn, rawOn);
		double oursCost = Stats.median(oursOn) / Stats.median(oursOff);
		double rawCost = Stats.median(rawOn) / Stats.median(rawOff);
		// The rounds' spread on a shared machine is wide: the ratio within each round (the sides run back to back)
		// is the steadier figure.
		String cost = String.format(
				"sliced / unsliced: ours %.2f, raw %.2f (of the medians); per round: ours %s, raw %s", oursCost,
				rawCost, perRound(oursOn, oursOff), perRound(rawOn, rawOff));
		return List.of(
				Result.of("append-tagged", "ops/s", oursOff, rawOff, "one tagged event per append, tag index on, "
						+ "tag-slice-groups 0: claim, then one logged batch of the event and its tag row; 64 in flight over "
						+ pids + " persistenceIds; " + cost),
				Result.of("append-tagged-sliced", "ops/s", oursOn, rawOn, "as append-tagged with tag-slice-groups "
						+ GROUPS + ": the logged batch also holds the tag row's sliced copy; " + cost));
	}

	/** @return the median, min and max over the rounds of {@code on / off} of the same round */
	private static String perRound(List<Double> on, List<Double> off) {
		List<Double> ratios = new ArrayList<>();
		for (int i = 0; i < Math.min(on.size(), off.size()); i++) {
			ratios.add(on.get(i) / off.get(i));
		}
		return String.format("median %.2f (%.2f to %.2f, %d rounds)", Stats.median(ratios),
				ratios.stream().mapToDouble(Double::doubleValue).min().orElse(0),
				ratios.stream().mapToDouble(Double::doubleValue).max().orElse(0), ratios.size());
	}

	private static double phase(String workload, String side, int operations, DoubleSupplier round) {
		Phase phase = Phase.begin(workload, side);
		double figure = round.getAsDouble();
		phase.end(operations);
		return figure;
	}

}
