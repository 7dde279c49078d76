package io.cassandrajournal.benchmarks;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import org.HdrHistogram.Histogram;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.launcher.CassandraNode;
import io.cassandrajournal.serialization.JacksonEventSerializer;

/**
 * Runs every workload, ours and the raw driver alternating in the same run, and reports medians.
 * <p>
 * Arguments: {@code --full} (the default: 3 rounds, sizes from the issue) or {@code --smoke} (seconds);
 * {@code --contact-points host:port[,..]} and {@code --datacenter dc} to use a running cluster instead of
 * starting a node; {@code --output dir} (default {@code benchmarks/results}); {@code --only group,..} (groups
 * {@code appends}, {@code reads}, {@code projection}, {@code scaling}, {@code retention}) or {@code --workloads name,..} (workload
 * names as in the table, such as {@code replay-100k,tag-walk}) to run part of it; {@code --rounds n} to change
 * the number of rounds; {@code --lease-timing 4s,1s} (lease timeout, renew interval; {@code s} or {@code ms}) for
 * {@code projection-failover} instead of the defaults; {@code --projection-batches 100,500,..} to run
 * {@code projection} with other batch sizes (rows per read and per offset save; 100, the default, keeps the name
 * {@code projection}, others are named {@code projection-batch-<n>}); {@code --e2e-load n} for the append rate of
 * {@code end-to-end-push-loaded} (default 200 a second); {@code --no-pin-cpus} to leave the node it starts and the
 * benchmark's JVM on all cores (by default each gets a core of its own: {@link CpuPinning}). A partial run writes
 * {@code partial.json}.
 */
public final class BenchmarkMain {

	/** Workload groups to run ({@code appends}, {@code reads}, {@code projection}, {@code scaling}); all if null. */
	private static java.util.@org.jspecify.annotations.Nullable Set<String> only;

	/** Batch sizes of the {@code projection} workload. */
	private static int[] projectionBatches = { 100 };

	/** Appends a second of the load under {@code end-to-end-push-loaded}. */
	private static int endToEndLoad = 200;

	/**
	 * Whether to put the node this run starts and the benchmark's JVM on a core each: on from the command line
	 * unless {@code --no-pin-cpus}, off for {@link #run} called from a test (it would pin the test's JVM).
	 */
	private static boolean pinCpus;

	private BenchmarkMain() {
	}

	/** Workload names to run; all (of the selected groups) if null. */
	private static java.util.@org.jspecify.annotations.Nullable Set<String> workloads;

	/** {@code projection-failover}'s lease timeout and renew interval; the defaults if null. */
	private static Duration @org.jspecify.annotations.Nullable [] leaseTiming;

	private static boolean selected(String group) {
		return only == null || only.contains(group);
	}

	/** @return whether any of these workloads of this group runs */
	private static boolean selected(String group, String... names) {
		if (!selected(group)) {
			return false;
		}
		if (workloads == null) {
			return true;
		}
		for (String name : names) {
			if (workloads.contains(name)) {
				return true;
			}
		}
		return false;
	}

	public static void main(String[] arguments) throws Exception {
		// Maven passes -Dbenchmark.args="--full --only reads" as one argument: split it.
		String[] args = java.util.Arrays.stream(arguments)
			.flatMap((arg) -> java.util.Arrays.stream(arg.trim().split("\\s+")))
			.filter((arg) -> !arg.isEmpty())
			.toArray(String[]::new);
		boolean smoke = false;
		only = null;
		workloads = null;
		leaseTiming = null;
		pinCpus = true;
		int rounds = 0;
		String contactPoints = null;
		String datacenter = "datacenter1";
		Path output = Path.of("benchmarks", "results");
		for (int i = 0; i < args.length; i++) {
			switch (args[i]) {
				case "--smoke" -> smoke = true;
				case "--full" -> smoke = false;
				case "--contact-points" -> contactPoints = args[++i];
				case "--datacenter" -> datacenter = args[++i];
				case "--output" -> output = Path.of(args[++i]);
				case "--only" -> only = java.util.Set.of(args[++i].split(","));
				case "--workloads" -> workloads = java.util.Set.of(args[++i].split(","));
				case "--rounds" -> rounds = Integer.parseInt(args[++i]);
				case "--lease-timing" -> leaseTiming = leaseTiming(args[++i]);
				case "--projection-batches" -> projectionBatches = java.util.Arrays.stream(args[++i].split(","))
					.mapToInt(Integer::parseInt).toArray();
				case "--e2e-load" -> endToEndLoad = Integer.parseInt(args[++i]);
				case "--no-pin-cpus" -> pinCpus = false;
				default -> throw new IllegalArgumentException("Unknown argument " + args[i]
						+ "; use --full, --smoke, --contact-points host:port, --datacenter dc, --output dir, "
						+ "--only appends,reads,projection,scaling, --workloads replay-100k,tag-walk,.., --rounds n, "
						+ "--lease-timing 4s,1s, --projection-batches 100,500,.., --e2e-load appends-per-second, --no-pin-cpus");
			}
		}
		Bench.Sizes sizes = smoke ? Bench.Sizes.smoke() : Bench.Sizes.full();
		run((rounds > 0) ? sizes.withRounds(rounds) : sizes, contactPoints, datacenter, output);
	}

	static List<Result> run(Bench.Sizes sizes, String contactPoints, String datacenter, Path output) throws Exception {
		long started = System.nanoTime();
		int cores = CpuPinning.allowedCpus().size();
		CassandraNode node = null;
		List<InetSocketAddress> points = new ArrayList<>();
		String pinning = "none (external cluster)";
		if (contactPoints == null) {
			boolean pin = pinCpus && CpuPinning.possible();
			CassandraNode.Builder builder = CassandraNode.builder().maxHeap("1g");
			node = (pin ? builder.processors(1) : builder).build();
			node.start();
			points.add(node.contactPoint());
			pinning = pin ? CpuPinning.pin(node.pid())
					: "none (" + (pinCpus ? "needs two cores and taskset" : "not asked: --no-pin-cpus, or run from a test")
							+ ")";
			System.out.println("cpu pinning: " + pinning);
		}
		else {
			for (String point : contactPoints.split(",")) {
				String[] hostPort = point.trim().split(":");
				points.add(new InetSocketAddress(hostPort[0], Integer.parseInt(hostPort[1])));
			}
		}
		try (CqlSession session = CqlSession.builder()
			.addContactPoints(points)
			.withLocalDatacenter(datacenter)
			.withConfigLoader(DriverConfigLoader.programmaticBuilder()
				.withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(30))
				.withInt(DefaultDriverOption.REQUEST_PAGE_SIZE, 1000)
				.withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ZERO)
				.build())
			.build()) {
			String keyspace = "bench_" + System.currentTimeMillis();
			session.execute("CREATE KEYSPACE " + keyspace
					+ " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
			CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace).withPageSize(1000);
			Bench bench = new Bench(session, options, new JacksonEventSerializer(), sizes);
			List<Result> results = new ArrayList<>();
			AppendWorkloads appends = new AppendWorkloads(bench);
			// warm-up: JIT and prepared statements on both sides
			appends.ours(CassandraJournalAccess.lwt(appends), Math.max(200, sizes.appends() / 10), sizes.persistenceIds(), 1, 64);
			appends.raw(AppendWorkloads.RawWrite.LWT, Math.max(200, sizes.appends() / 10), sizes.persistenceIds(), 1, 64);

			if (selected("appends", "append-lwt-1")) {
				results.add(log(appends.throughput("append-lwt-1", 1, sizes.appends())));
			}
			if (selected("appends", "append-lwt-10")) {
				results.add(log(appends.throughput("append-lwt-10", 10, sizes.appends() / 4)));
			}
			if (selected("appends", "append-nolwt-1", "append-nolwt-1-cheapest")) {
				appends.throughputWithoutLwt(sizes.appends()).forEach((r) -> results.add(log(r)));
			}
			if (selected("appends", "append-latency")) {
				results.add(log(appends.latency()));
			}
			if (selected("appends", "append-tagged", "append-tagged-sliced")) {
				new TaggedAppendWorkloads(bench).throughput().forEach((r) -> results.add(log(r)));
			}
			ReadWorkloads reads = new ReadWorkloads(bench);
			if (selected("reads", "replay-100k")) {
				results.add(log(reads.replay()));
			}
			if (selected("reads", "replay-100k-upcast", "replay-100k-upcast-tree")) {
				reads.replayUpcast().forEach((r) -> results.add(log(r)));
			}
			if (selected("reads", "tag-walk", "tag-walk-deserialized")) {
				reads.tagWalk().forEach((r) -> results.add(log(r)));
			}
			if (selected("reads", "tag-walk-bucketed")) {
				results.add(log(reads.tagWalkBucketed()));
			}
			ProjectionWorkloads projections = new ProjectionWorkloads(bench, reads);
			List<Histogram> e2e = new ArrayList<>();
			if (selected("projection", "projection")) {
				for (int batch : projectionBatches) {
					results.add(log(projections.throughput(batch)));
				}
			}
			if (selected("projection", "end-to-end-push", "end-to-end-poll")) {
				projections.endToEnd(e2e).forEach((r) -> results.add(log(r)));
			}
			if (selected("projection", "end-to-end-push-loaded")) {
				new LoadedEndToEnd(bench, reads, endToEndLoad).run(e2e).forEach((r) -> results.add(log(r)));
			}
			if (selected("projection", "projection-lanes-8-io")) {
				results.add(log(new CommandAndLaneWorkloads(bench, reads).lanesWithIoHandler()));
			}
			if (selected("appends", "entity-command-cached")) {
				results.add(log(new CommandAndLaneWorkloads(bench, reads).entityCommand()));
			}
			if (selected("projection", "projection-shared")) {
				new SharedProjectionWorkloads(bench, reads).throughput(TagBucketing.NONE).forEach((r) -> results.add(log(r)));
			}
			if (selected("projection", "projection-shared-hour")) {
				new SharedProjectionWorkloads(bench, reads).throughput(TagBucketing.HOUR).forEach((r) -> results.add(log(r)));
			}
			if (selected("projection", "projection-shared-sliced")) {
				new SharedProjectionWorkloads(bench, reads).throughput(TagBucketing.NONE, 16)
					.forEach((r) -> results.add(log(r)));
			}
			if (selected("projection", "projection-shared-hour-sliced")) {
				new SharedProjectionWorkloads(bench, reads).throughput(TagBucketing.HOUR, 16)
					.forEach((r) -> results.add(log(r)));
			}
			if (selected("projection", "projection-failover")) {
				results.addAll(new FailoverWorkloads(bench, reads, points.get(0), leaseTiming).failover().stream()
					.map(BenchmarkMain::log)
					.toList());
			}
			if (selected("retention", "cleanup", "cleanup-disk-freed", "cleanup-disk-freed-no-grace")) {
				new CleanupWorkloads(bench, node).cleanup().forEach((r) -> results.add(log(r)));
			}
			List<double[]> curve = new ArrayList<>();
			if (selected("scaling", "scaling")) {
				appends.scaling(curve).forEach((r) -> results.add(log(r)));
			}

			Map<String, Object> environment = new LinkedHashMap<>();
			environment.put("date", Instant.now().toString());
			environment.put("mode", (sizes.tagEvents() < Bench.Sizes.full().tagEvents()) ? "smoke" : "full");
			environment.put("rounds", sizes.rounds());
			environment.put("protocol_version", session.getContext().getProtocolVersion().toString());
			environment.put("consistency", options.consistency().toString());
			environment.put("page_size", options.pageSize());
			environment.put("cassandra", (node != null) ? "5.0.9, one node started by cassandra-launcher (1 GB heap)"
					: "external " + contactPoints);
			environment.put("cpus", cores);
			environment.put("cpu_pinning", pinning);
			environment.put("java", Runtime.version().toString());
			environment.put("wall_seconds", Math.round((System.nanoTime() - started) / 1e9));
			System.out.println();
			System.out.println(Report.table(results));
			System.out.println("environment: " + environment);
			if (only != null || workloads != null) {
				// A partial run: its figures go to a file of their own, the charts stay those of the last full run.
				if (only != null) {
					environment.put("only", String.join(",", only));
				}
				if (workloads != null) {
					environment.put("workloads", String.join(",", workloads));
				}
				if (leaseTiming != null) {
					environment.put("lease_timing", leaseTiming[0] + "," + leaseTiming[1]);
				}
				Report.writeJson(output.resolve("partial.json"), results, environment);
				System.out.println("wrote " + output.resolve("partial.json").toAbsolutePath());
				return results;
			}
			Report.writeJson(output.resolve("latest.json"), results, environment);
			Report.writeScalingSvg(output.resolve("scaling.svg"), curve);
			List<Histogram> latencies = new ArrayList<>(appends.latencyHistograms);
			latencies.addAll(e2e);
			Report.writeLatencySvg(output.resolve("latency.svg"),
					List.of("append ours", "append raw", "append-to-handler push", "append-to-handler poll 100 ms",
							"append-to-handler push, under load"), latencies);
			System.out.println("wrote " + output.resolve("latest.json").toAbsolutePath());
			return results;
		}
		finally {
			if (node != null) {
				node.close();
			}
		}
	}

	/**
	 * @param value {@code <timeout>,<renew interval>}, each a number with {@code s} or {@code ms}, such as {@code 4s,1s}
	 * @return the two durations, checked as the engine checks them (the renew interval at most a third of the timeout)
	 */
	static Duration[] leaseTiming(String value) {
		String[] parts = value.split(",");
		if (parts.length != 2) {
			throw new IllegalArgumentException("--lease-timing takes <timeout>,<renew interval>, such as 4s,1s; was "
					+ value);
		}
		Duration[] timing = { duration(parts[0]), duration(parts[1]) };
		if (timing[1].isZero() || timing[1].multipliedBy(3).compareTo(timing[0]) > 0) {
			throw new IllegalArgumentException("--lease-timing: the renew interval must be positive and at most a "
					+ "third of the lease timeout; was " + value);
		}
		return timing;
	}

	private static Duration duration(String text) {
		String t = text.trim();
		if (t.endsWith("ms")) {
			return Duration.ofMillis(Long.parseLong(t.substring(0, t.length() - 2)));
		}
		if (t.endsWith("s")) {
			return Duration.ofMillis(Math.round(Double.parseDouble(t.substring(0, t.length() - 1)) * 1000));
		}
		throw new IllegalArgumentException("--lease-timing: " + text + " needs a unit, s or ms (such as 4s or 500ms)");
	}

	private static Result log(Result result) {
		boolean price = Result.PRICE.equals(result.kind());
		System.out.printf("%-20s ours %10.1f %s  %s %10s  %s %s%s%n", result.name(), result.ours(), result.unit(),
				price ? "other" : "raw", (result.raw() != null) ? String.format("%.1f", result.raw()) : "-",
				price ? "price" : "ratio", (result.ratio() != null) ? String.format("%.2f", result.ratio()) : "-",
				price ? " (ours / " + result.otherSide() + ", not overhead)" : "");
		return result;
	}

}
