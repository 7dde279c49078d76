package io.cassandrajournal.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.projection.SegmentStatus;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.state.CassandraDurableStateStore;

/**
 * Failover time of a shared projection, as issue 15 defines it: from the last event a killed owner handled to the
 * first event a new owner handled, per segment the killed instance held. Three instances
 * ({@link FailoverInstanceMain}, each its own JVM) share a by-tag projection of {@link #SEGMENTS} segments with the
 * default lease timing ({@link ProjectionSharing#DEFAULT_LEASE_TIMEOUT}, renewed every
 * {@link ProjectionSharing#DEFAULT_RENEW_INTERVAL}; the smoke run {@link #SMOKE_LEASE_TIMEOUT}; another with
 * {@code --lease-timing 4s,1s}) and default projection settings, under continuous appends
 * from this JVM; the instance holding the most segments is killed with SIGKILL and started again (a new instance
 * id, as a restarted pod gets), {@link #kills} times, at least {@link #KILL_SPACING} apart and each once the
 * three instances share the segments again.
 * <p>
 * Who held what comes from the lease rows, read just before each kill (by an engine that is never started), once
 * every segment's lease names the instance that handled its latest event (no hand-over in progress); who handled
 * what from the instances' files (the segment of an event is its persistenceId's slice, by the options' slice
 * function, over the slices per segment, as the engine computes it). Wall-clock times of one machine (the JVMs share its
 * clock). What the lease timing costs: the writes and reads the node applied to the lease and membership tables
 * during the run, from its metric virtual tables ({@code system_views.local_write_latency} and
 * {@code local_read_latency}: counts per table, on the node the benchmark's session asks; meaningful on one node).
 */
final class FailoverWorkloads {

	static final String PROJECTION = "bench-failover";

	static final int SEGMENTS = 16;

	/** Entities the appends go round (ids that spread, {@link SharedProjectionWorkloads#entity}): 16 per segment on average. */
	static final int ENTITIES = 256;

	/** Pacing of the appends: one every 10 ms (at most 100 a second; fewer when an append takes longer). */
	static final Duration APPEND_EVERY = Duration.ofMillis(10);

	static final Duration KILL_SPACING = Duration.ofSeconds(20);

	/**
	 * Lease timing of the smoke run (one kill, figures that mean nothing): 3 s / 1 s instead of the defaults, so
	 * the kill's takeover costs the verify about 5 s instead of about 16 s. The full run keeps the defaults.
	 */
	static final Duration SMOKE_LEASE_TIMEOUT = Duration.ofSeconds(3);

	static final Duration SMOKE_RENEW_INTERVAL = Duration.ofSeconds(1);

	private static final String[] NAMES = { "a", "b", "c" };

	private final Bench bench;

	private final InetSocketAddress contactPoint;

	private final CassandraJournalOptions options;

	private final int kills;

	private final Duration leaseTimeout;

	private final Duration renewInterval;

	private final String tag = "failover-" + System.nanoTime();

	private final Path work;

	private final Map<String, Process> running = new HashMap<>();

	private final Map<String, String> latest = new HashMap<>();

	private final List<String> instanceIds = new ArrayList<>();

	private int incarnations;

	/**
	 * @param bench the benchmark
	 * @param reads the read workloads (their keyspace)
	 * @param contactPoint where the instances connect
	 * @param leaseTiming lease timeout and renew interval, or null for the defaults (the smoke run: 3 s / 1 s)
	 */
	FailoverWorkloads(Bench bench, ReadWorkloads reads, InetSocketAddress contactPoint,
			Duration @Nullable [] leaseTiming) {
		this.bench = bench;
		this.contactPoint = contactPoint;
		this.options = options(reads.options().requireKeyspace());
		boolean smoke = bench.sizes().tagEvents() < Bench.Sizes.full().tagEvents();
		this.kills = smoke ? 1 : 12;
		this.leaseTimeout = (leaseTiming != null) ? leaseTiming[0]
				: smoke ? SMOKE_LEASE_TIMEOUT : ProjectionSharing.DEFAULT_LEASE_TIMEOUT;
		this.renewInterval = (leaseTiming != null) ? leaseTiming[1]
				: smoke ? SMOKE_RENEW_INTERVAL : ProjectionSharing.DEFAULT_RENEW_INTERVAL;
		try {
			this.work = Files.createTempDirectory("bench-failover");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * The options of the benchmark's read workloads, which every instance uses too. The slice function is set, to
	 * the one {@link #segmentOf} computes with: the instances build their journals without {@code verifyLayout}, and
	 * an unset function would be the keyspace's recorded one, which {@link #segmentOf} does not read (engineer L2,
	 * review of finding 27).
	 */
	static CassandraJournalOptions options(String keyspace) {
		return CassandraJournalOptions.create()
			.withKeyspace(keyspace)
			.withPageSize(1000)
			.withUseTagIndex(true)
			.withPartitionSize(50_000)
			.withSliceHash(SLICE_HASH);
	}

	/**
	 * One event handled, from an instance's file.
	 *
	 * @param millis when the handler was called (epoch milliseconds)
	 * @param instance the instance id
	 * @param segment the event's segment
	 * @param event persistenceId and sequence number
	 */
	record Handled(long millis, String instance, int segment, String event) {
	}

	/**
	 * One kill.
	 *
	 * @param instance the killed instance
	 * @param millis when it was killed
	 * @param held the segments its leases named just before the kill
	 */
	record Kill(String instance, long millis, Set<Integer> held) {
	}

	/** @return failover (last by the dead owner to first by the new one), and kill to first by the new one */
	List<Result> failover() throws Exception {
		CassandraJournal journal = CassandraJournal.create(this.bench.session(), this.options, this.bench.serializer());
		CassandraDurableStateStore.create(this.bench.session(), this.options, this.bench.serializer());
		// Never started: reads the lease rows (who holds each segment) for the benchmark.
		ProjectionEngine observer = ProjectionEngine.builder(journal)
			.readJournal(CassandraReadJournal.create(journal, this.bench.session(), this.options, this.bench.serializer()))
			.offsetStore(new DurableStateOffsetStore(
					CassandraDurableStateStore.create(this.bench.session(), this.options, this.bench.serializer())))
			.sharing(ProjectionSharing.create(this.bench.session(), this.options).withInstanceId(this.tag + "-observer"))
			.build();
		observer.register(Projection.byTag(PROJECTION, TagFilter.tag(this.tag), String.class, (EventHandler<String>) (e) -> {
			throw new IllegalStateException("the observer never runs");
		}, ProjectionSettings.defaults().withSegments(SEGMENTS)));
		AtomicBoolean appending = new AtomicBoolean(true);
		AtomicLong appended = new AtomicLong();
		Thread appender = new Thread(() -> append(journal, appending, appended), "failover-appender");
		List<Kill> done = new ArrayList<>();
		Map<String, Long> countsBefore = tableCounts();
		long started = System.nanoTime();
		try {
			for (String name : NAMES) {
				start(name);
			}
			appender.start();
			for (int k = 0; k < this.kills; k++) {
				long notBefore = System.nanoTime() + ((k == 0) ? 0 : KILL_SPACING.toNanos());
				while (System.nanoTime() < notBefore) {
					LockSupport.parkNanos(notBefore - System.nanoTime()); // the kill schedule, not a wait for a condition
				}
				// Bound: a restarted instance's start-up, its beat seen and its share handed over.
				waitFor("every segment held by a running instance that has handled events of it, each running one "
						+ "holding some", Duration.ofSeconds(120), () -> settled(observer));
				Map<Integer, String> holders = leaseOwners(observer);
				String victimName = victim(holders);
				String victimId = this.latest.get(victimName);
				this.running.get(victimName).destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				long killed = System.currentTimeMillis();
				Set<Integer> held = new HashSet<>();
				holders.forEach((segment, holder) -> {
					if (holder.equals(victimId)) {
						held.add(segment);
					}
				});
				done.add(new Kill(victimId, killed, held));
				System.out.printf("failover: %s killed holding segments %s%n", victimId, held);
				start(victimName);
				// Bound: the lease timeout, a few renew intervals to take, the first read (poll interval).
				waitFor("segments of " + victimId + " handled elsewhere", ProjectionSharing.DEFAULT_LEASE_TIMEOUT
					.multipliedBy(6), () -> takenOver(held, victimId, killed));
			}
			appending.set(false);
			appender.join(30_000);
			// Bound: the owners catch up with the last appends.
			waitFor("every appended event handled", Duration.ofSeconds(120), () -> handledEvents() >= appended.get());
			this.leaseCost = leaseCost(countsBefore, tableCounts(), (System.nanoTime() - started) / 1e9);
		}
		finally {
			appending.set(false);
			for (Process process : this.running.values()) {
				process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
			}
			observer.close();
		}
		return results(done, appended.get(), (System.nanoTime() - started) / 1e9);
	}

	/** What the lease and membership tables cost during the run, for the notes; "not measured" if unknown. */
	private String leaseCost = "not measured";

	/**
	 * @return the node's counts of local writes and reads of the lease and membership tables (keys
	 * {@code write:leases} and so on); empty where the metric virtual tables cannot be read
	 */
	private Map<String, Long> tableCounts() {
		Map<String, Long> counts = new HashMap<>();
		Map<String, String> tables = Map.of("leases", this.options.durableStateTable() + "_leases", "members",
				this.options.durableStateTable() + "_members");
		Map<String, String> views = Map.of("write", "local_write_latency", "read", "local_read_latency");
		views.forEach((kind, view) -> tables.forEach((name, table) -> {
			try {
				Row row = this.bench.session()
					.execute(SimpleStatement.newInstance("SELECT count FROM system_views." + view
							+ " WHERE keyspace_name = ? AND table_name = ?", this.options.requireKeyspace(), table))
					.one();
				if (row != null) {
					counts.put(kind + ":" + name, row.getLong(0));
				}
			}
			catch (RuntimeException ex) {
				// no metric virtual tables here (another Cassandra, another version): not measured
			}
		}));
		return counts;
	}

	/** @return the lease and membership tables' writes and reads per second during the run, for the notes */
	private String leaseCost(Map<String, Long> before, Map<String, Long> after, double seconds) {
		if (after.size() < 4 || after.get("write:leases") == null || after.get("write:leases") == 0) {
			return "not measured (no metric virtual tables, or no count)";
		}
		double leaseWrites = (after.get("write:leases") - before.getOrDefault("write:leases", 0L)) / seconds;
		double leaseReads = (after.get("read:leases") - before.getOrDefault("read:leases", 0L)) / seconds;
		double memberWrites = (after.get("write:members") - before.getOrDefault("write:members", 0L)) / seconds;
		double memberReads = (after.get("read:members") - before.getOrDefault("read:members", 0L)) / seconds;
		String cost = String.format("lease table %.2f writes/s (%.2f per segment), %.1f row reads/s (%.2f per segment); "
				+ "membership table %.2f writes/s, %.1f reads/s; over %.0f s, local counts of the node",
				leaseWrites, leaseWrites / SEGMENTS, leaseReads, leaseReads / SEGMENTS, memberWrites, memberReads, seconds);
		System.out.println("failover: lease timing " + this.leaseTimeout.toMillis() + " ms / "
				+ this.renewInterval.toMillis() + " ms costs: " + cost);
		return cost;
	}

	private List<Result> results(List<Kill> kills, long appended, double seconds) {
		List<Handled> all = handled();
		List<Double> lastToFirst = new ArrayList<>();
		List<Double> killToFirst = new ArrayList<>();
		for (Kill kill : kills) {
			for (int segment : kill.held()) {
				all.stream()
					.filter((h) -> h.segment() == segment && h.instance().equals(kill.instance()))
					.mapToLong(Handled::millis)
					.max()
					.ifPresent((last) -> all.stream()
						.filter((h) -> h.segment() == segment && !h.instance().equals(kill.instance()) && h.millis() >= last)
						.mapToLong(Handled::millis)
						.min()
						.ifPresent((first) -> {
							lastToFirst.add((first - last) / 1000.0);
							killToFirst.add((first - kill.millis()) / 1000.0);
						}));
			}
		}
		long distinct = all.stream().map(Handled::event).distinct().count();
		String setup = String.format("3 instances (own JVMs), %d segments, lease timeout %s s, renew %s s, default "
				+ "projection settings (poll 1 s, batch 100, backtrack 10 s); %d SIGKILLs of the instance holding most "
				+ "segments, %d segment takeovers; %d events appended in %.0f s over %d entities, %d handled (%d distinct); "
				+ "lease cost: %s",
				SEGMENTS, this.leaseTimeout.toMillis() / 1000.0, this.renewInterval.toMillis() / 1000.0, kills.size(),
				lastToFirst.size(), appended, seconds, ENTITIES, all.size(), distinct, this.leaseCost);
		System.out.println("failover samples (s), last by dead owner to first by new owner: " + sorted(lastToFirst));
		System.out.println("failover samples (s), kill to first by new owner: " + sorted(killToFirst));
		List<Result> results = new ArrayList<>();
		results.add(new Result("projection-failover", "s", percentile(lastToFirst, 50), null,
				percentile(lastToFirst, 50) * 1000, percentile(lastToFirst, 99) * 1000, null, null,
				"per segment taken over: last event handled by the killed owner to first event handled by its new owner; "
						+ setup + "; max " + percentile(lastToFirst, 100) + " s; the rounds are the samples",
				sorted(lastToFirst), List.of()));
		results.add(new Result("projection-failover-from-kill", "s", percentile(killToFirst, 50), null,
				percentile(killToFirst, 50) * 1000, percentile(killToFirst, 99) * 1000, null, null,
				"per segment taken over: SIGKILL to first event handled by its new owner; " + setup
						+ "; the rounds are the samples", sorted(killToFirst),
				List.of()));
		return results;
	}

	private static List<Double> sorted(List<Double> values) {
		return values.stream().sorted().toList();
	}

	/** Nearest rank: the smallest sample with at least {@code p} percent of the samples at or below it. */
	static double percentile(List<Double> values, double p) {
		if (values.isEmpty()) {
			return Double.NaN;
		}
		List<Double> sorted = sorted(values);
		int rank = (int) Math.ceil(p / 100 * sorted.size());
		return sorted.get(Math.max(0, rank - 1));
	}

	/** @return the running instance that last handled the most segments */
	private String victim(Map<Integer, String> holders) {
		Map<String, Integer> counts = new LinkedHashMap<>();
		for (String name : NAMES) {
			counts.put(name, 0);
		}
		holders.forEach((segment, holder) -> {
			for (String name : NAMES) {
				if (holder.equals(this.latest.get(name))) {
					counts.merge(name, 1, Integer::sum);
				}
			}
		});
		return counts.entrySet().stream().max(Map.Entry.comparingByValue()).orElseThrow().getKey();
	}

	/**
	 * @return whether every segment's lease names a running instance that handled the segment's latest event (no
	 * hand-over in progress) and each running instance holds some
	 */
	private boolean settled(ProjectionEngine observer) {
		Map<Integer, String> owners = leaseOwners(observer);
		Set<String> live = new HashSet<>(this.latest.values());
		return owners.size() == SEGMENTS && owners.equals(lastHandlers()) && live.containsAll(owners.values())
				&& new HashSet<>(owners.values()).containsAll(live);
	}

	/** @return per segment, the instance its lease row names (segments without an owner left out) */
	private static Map<Integer, String> leaseOwners(ProjectionEngine observer) {
		Map<Integer, String> owners = new HashMap<>();
		for (SegmentStatus status : Bench.join(observer.readSegments(PROJECTION))) {
			if (status.owner() != null) {
				int from = Integer.parseInt(status.range().substring(0, status.range().indexOf('-')));
				owners.put(from / (1024 / SEGMENTS), status.owner());
			}
		}
		return owners;
	}

	/** @return whether every one of these segments has an event handled after the kill by another instance */
	private boolean takenOver(Set<Integer> segments, String victim, long killed) {
		Set<Integer> taken = new HashSet<>();
		for (Handled h : handled()) {
			if (h.millis() > killed && !h.instance().equals(victim)) {
				taken.add(h.segment());
			}
		}
		return taken.containsAll(segments);
	}

	/** @return per segment, the instance that handled its latest event */
	private Map<Integer, String> lastHandlers() {
		Map<Integer, Handled> last = new HashMap<>();
		for (Handled h : handled()) {
			last.merge(h.segment(), h, (a, b) -> (b.millis() >= a.millis()) ? b : a);
		}
		Map<Integer, String> holders = new HashMap<>();
		last.forEach((segment, h) -> holders.put(segment, h.instance()));
		return holders;
	}

	private long handledEvents() {
		return handled().stream().map(Handled::event).distinct().count();
	}

	private List<Handled> handled() {
		List<Handled> all = new ArrayList<>();
		for (String id : this.instanceIds) {
			Path file = this.work.resolve(id + ".handled");
			if (!Files.exists(file)) {
				continue;
			}
			try {
				for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
					String[] f = line.split("\t", -1);
					if (f.length == 3 && !f[2].isEmpty()) { // else the line a SIGKILL cut short
						all.add(new Handled(Long.parseLong(f[0]), id, segmentOf(f[1]), f[1] + "#" + f[2]));
					}
				}
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}
		return all;
	}

	/**
	 * The engine's segment of a persistenceId: its slice (the slice function the instances' options set), over the
	 * slices per segment.
	 */
	static int segmentOf(String persistenceId) {
		return SLICE_HASH.slice(persistenceId) / (1024 / SEGMENTS);
	}

	/** The instances' slice function ({@link #options}). */
	private static final SliceHash SLICE_HASH = SliceHash.MURMUR3;

	private void start(String name) throws Exception {
		String id = name + "-" + this.incarnations++;
		Path output = this.work.resolve(id + ".out");
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		Process child = new ProcessBuilder(java, "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp",
				System.getProperty("java.class.path"), FailoverInstanceMain.class.getName(),
				this.contactPoint.getHostString(), Integer.toString(this.contactPoint.getPort()),
				this.options.requireKeyspace(), this.tag, id, this.work.resolve(id + ".handled").toString(),
				Long.toString(this.leaseTimeout.toMillis()), Long.toString(this.renewInterval.toMillis()))
			.redirectErrorStream(true)
			.redirectOutput(output.toFile())
			.start();
		this.instanceIds.add(id);
		this.running.put(name, child);
		this.latest.put(name, id);
		// Bound: a JVM start, a session and the engine's start-up on a loaded 2-core machine.
		waitFor("instance " + id + " started", Duration.ofSeconds(90), () -> {
			if (!child.isAlive()) {
				throw new IllegalStateException(id + " exited: " + read(output));
			}
			return read(output).contains("STARTED");
		});
	}

	private static String read(Path file) {
		try {
			return Files.readString(file);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** Polls every 200 ms until the condition holds; fails naming it after {@code bound}. */
	private static void waitFor(String what, Duration bound, BooleanSupplier condition) {
		long deadline = System.nanoTime() + bound.toNanos();
		while (!condition.getAsBoolean()) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("failover benchmark: not within " + bound + ": " + what);
			}
			LockSupport.parkNanos(Duration.ofMillis(200).toNanos());
		}
	}

	/** One event at a time, round robin over the entities, paced by {@link #APPEND_EVERY}, until stopped. */
	private void append(CassandraJournal journal, AtomicBoolean appending, AtomicLong appended) {
		long[] heads = new long[ENTITIES];
		long next = System.nanoTime();
		int i = 0;
		while (appending.get()) {
			int entity = i++ % ENTITIES;
			try {
				Bench.join(journal.append(SharedProjectionWorkloads.entity(this.tag, entity), heads[entity],
						List.of(EventToAppend.of(new AppendWorkloads.Deposited(1), this.tag))));
			}
			catch (RuntimeException ex) {
				System.out.println("failover: append failed, appending stops: " + ex);
				return;
			}
			heads[entity]++;
			appended.incrementAndGet();
			// Pacing of the load, not a wait for a condition; no burst to catch up after a slow append.
			next = Math.max(next + APPEND_EVERY.toNanos(), System.nanoTime());
			LockSupport.parkNanos(next - System.nanoTime());
		}
	}

}
