package io.cassandrajournal.benchmarks;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.Row;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.launcher.CassandraNode;
import io.cassandrajournal.serialization.JacksonEventSerializer;

/**
 * The Pekko peer run: starts a node as {@link BenchmarkMain} does, runs the workloads Apache Pekko Persistence
 * Cassandra can do ({@link PeerWorkloads}) with ours and the raw driver in the same rounds, prints a table and
 * adds the rows ({@code pekko-*}) and a {@code _peer_environment} entry to {@code latest.json} in the output
 * directory (replacing those of an earlier peer run; the other rows are left as they are), and draws
 * {@code peer.svg}.
 * <p>
 * Arguments: {@code --full} (the default: the sizes and rounds of the full benchmark), {@code --smoke}
 * (seconds), {@code --rounds n}, {@code --output dir} (default {@code benchmarks/results}).
 */
public final class PeerMain {

	private PeerMain() {
	}

	/** As {@code BenchmarkMain}'s: on from the command line unless {@code --no-pin-cpus}, off from a test. */
	private static boolean pinCpus;

	public static void main(String[] arguments) throws Exception {
		String[] args = Arrays.stream(arguments)
			.flatMap((arg) -> Arrays.stream(arg.trim().split("\\s+")))
			.filter((arg) -> !arg.isEmpty())
			.toArray(String[]::new);
		boolean smoke = false;
		pinCpus = true;
		int rounds = 0;
		Path output = Path.of("benchmarks", "results");
		for (int i = 0; i < args.length; i++) {
			switch (args[i]) {
				case "--smoke" -> smoke = true;
				case "--full" -> smoke = false;
				case "--rounds" -> rounds = Integer.parseInt(args[++i]);
				case "--output" -> output = Path.of(args[++i]);
				case "--no-pin-cpus" -> pinCpus = false;
				default -> throw new IllegalArgumentException("Unknown argument " + args[i]
						+ "; use --full, --smoke, --rounds n, --output dir, --no-pin-cpus");
			}
		}
		Bench.Sizes sizes = smoke ? Bench.Sizes.smoke() : Bench.Sizes.full();
		run((rounds > 0) ? sizes.withRounds(rounds) : sizes, output);
	}

	static List<PeerResult> run(Bench.Sizes sizes, Path output) throws Exception {
		long started = System.nanoTime();
		int cores = CpuPinning.allowedCpus().size();
		boolean pin = pinCpus && CpuPinning.possible();
		CassandraNode.Builder builder = CassandraNode.builder().maxHeap("1g");
		try (CassandraNode node = (pin ? builder.processors(1) : builder).build()) {
			node.start();
			String pinning = pin ? CpuPinning.pin(node.pid())
					: "none (" + (pinCpus ? "needs two cores and taskset" : "not asked: --no-pin-cpus, or run from a test")
							+ ")";
			System.out.println("cpu pinning: " + pinning);
			InetSocketAddress contactPoint = node.contactPoint();
			// The same driver settings as BenchmarkMain's session.
			try (CqlSession session = CqlSession.builder()
				.addContactPoint(contactPoint)
				.withLocalDatacenter(node.datacenter())
				.withConfigLoader(DriverConfigLoader.programmaticBuilder()
					.withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(30))
					.withInt(DefaultDriverOption.REQUEST_PAGE_SIZE, 1000)
					.withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ZERO)
					.build())
				.build()) {
				long now = System.currentTimeMillis();
				String keyspace = "bench_" + now;
				session.execute("CREATE KEYSPACE " + keyspace
						+ " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
				CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace).withPageSize(1000);
				Bench bench = new Bench(session, options, new JacksonEventSerializer(), sizes);
				ProtocolVersion protocol = session.getContext().getProtocolVersion();
				List<PeerResult> results = new ArrayList<>();
				Set<String> protocols;
				List<String> failures = new ArrayList<>();
				try (PekkoPeer peer = new PekkoPeer(contactPoint, node.datacenter(), "pekko_bench_" + now, protocol,
						options.consistency(), options.pageSize())) {
					PeerWorkloads workloads = new PeerWorkloads(bench, peer);
					results.add(log(workloads.appendsWithoutLwt("pekko-append-nolwt-1", 1, sizes.appends())));
					results.add(log(workloads.appendsWithoutLwt("pekko-append-nolwt-10", 10, sizes.appends() / 4)));
					results.add(log(workloads.replay()));
					try {
						results.add(log(workloads.tagWalk()));
					}
					catch (RuntimeException ex) {
						// Keep the other rows: the failure is reported in the environment entry and on the console.
						failures.add("pekko-tag-walk: " + ex);
						ex.printStackTrace();
					}
					// Every client connection the node has now, ours and the peer's: the protocol version of each.
					protocols = new TreeSet<>();
					for (Row row : session.execute("SELECT protocol_version FROM system_views.clients")) {
						protocols.add(String.valueOf(row.getObject(0)));
					}
					if (protocols.size() != 1) {
						throw new IllegalStateException("the sides used different protocol versions: " + protocols);
					}
				}
				Map<String, Object> environment = new LinkedHashMap<>();
				environment.put("date", Instant.now().toString());
				environment.put("mode", (sizes.tagEvents() < Bench.Sizes.full().tagEvents()) ? "smoke" : "full");
				environment.put("rounds", sizes.rounds());
				environment.put("peer", "Apache Pekko Persistence Cassandra " + PekkoPeer.pluginVersion() + " (Pekko "
						+ PekkoPeer.pekkoVersion() + "), its own keyspace and session on the same node and driver jar");
				environment.put("driver", CqlSession.OSS_DRIVER_COORDINATES.getVersion().toString());
				environment.put("protocol_version", protocol.toString());
				environment.put("protocol_versions_of_all_connections", String.join(",", protocols));
				environment.put("consistency", options.consistency().toString());
				environment.put("page_size", options.pageSize());
				environment.put("cassandra", "5.0.9, one node started by cassandra-launcher (1 GB heap)");
				environment.put("cpus", cores);
				environment.put("cpu_pinning", pinning);
				environment.put("java", Runtime.version().toString());
				environment.put("failures", failures);
				environment.put("wall_seconds", Math.round((System.nanoTime() - started) / 1e9));
				System.out.println();
				System.out.println(PeerReport.table(results));
				System.out.println("peer environment: " + environment);
				Path json = output.resolve("latest.json");
				PeerReport.mergeJson(json, results, environment);
				PeerReport.writeSvg(output.resolve("peer.svg"), results);
				System.out.println("wrote the peer rows to " + json.toAbsolutePath() + " and " + output.resolve("peer.svg"));
				return results;
			}
		}
	}

	private static PeerResult log(PeerResult r) {
		System.out.printf("%-24s ours %10.1f  raw %10.1f  pekko %10.1f %s  ours/pekko %.2f%n", r.name(), r.oursMedian(),
				r.rawMedian(), r.peerMedian(), r.unit(), r.oursToPeer());
		return r;
	}

}
