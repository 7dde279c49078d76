package io.cassandrajournal.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * The peer run's table, its rows in {@code latest.json} and its chart.
 */
final class PeerReport {

	static final String PREFIX = "pekko-";

	static final String ENVIRONMENT = "_peer_environment";

	private PeerReport() {
	}

	static String table(List<PeerResult> results) {
		StringBuilder out = new StringBuilder();
		out.append(String.format(Locale.ROOT, "%-24s %-9s %10s %10s %10s %10s %9s %10s%n", "workload", "unit", "ours",
				"raw", "pekko", "pekko raw", "ours/raw", "ours/pekko"));
		for (PeerResult r : results) {
			out.append(String.format(Locale.ROOT, "%-24s %-9s %10.1f %10.1f %10.1f %10s %9.2f %10.2f%n", r.name(), r.unit(),
					r.oursMedian(), r.rawMedian(), r.peerMedian(),
					r.peerRaw().isEmpty() ? "-" : String.format(Locale.ROOT, "%.1f", Stats.median(r.peerRaw())),
					r.oursMedian() / r.rawMedian(), r.oursToPeer()));
		}
		return out.toString();
	}

	/**
	 * One row per workload: medians and min/median/max of each side, {@code ratio} (ours/raw, as in the other
	 * rows, {@code kind} {@code overhead}), {@code peer_ratio} (peer/its raw where measured) and {@code ours_to_peer}.
	 */
	static List<Map<String, Object>> rows(List<PeerResult> results) {
		List<Map<String, Object>> rows = new ArrayList<>();
		for (PeerResult r : results) {
			Map<String, Object> row = new LinkedHashMap<>();
			row.put("name", r.name());
			row.put("unit", r.unit());
			row.put("ours", round(r.oursMedian()));
			row.put("raw", round(r.rawMedian()));
			row.put("ratio", round(r.oursMedian() / r.rawMedian()));
			// As the benchmark's rows (Report.writeJson): the raw side sends our requests, so the ratio is overhead.
			row.put("kind", Result.OVERHEAD);
			row.put("other_side", Result.RAW_DRIVER);
			row.put("peer", round(r.peerMedian()));
			row.put("ours_to_peer", round(r.oursToPeer()));
			if (!r.peerRaw().isEmpty()) {
				row.put("peer_raw", round(Stats.median(r.peerRaw())));
				row.put("peer_ratio", round(r.peerMedian() / Stats.median(r.peerRaw())));
			}
			row.put("ours_min_median_max", spread(r.ours()));
			row.put("raw_min_median_max", spread(r.raw()));
			row.put("peer_min_median_max", spread(r.peer()));
			if (!r.peerRaw().isEmpty()) {
				row.put("peer_raw_min_median_max", spread(r.peerRaw()));
			}
			row.put("rounds", r.ours().size());
			row.put("note", r.note());
			rows.add(row);
		}
		return rows;
	}

	/**
	 * Adds the rows to {@code file} (created if missing): rows and environment of an earlier peer run are
	 * replaced, the others kept in their order, the new rows going before {@code _environment}.
	 */
	static void mergeJson(Path file, List<PeerResult> results, Map<String, Object> environment) throws IOException {
		JsonMapper mapper = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
		List<Map<String, Object>> existing = Files.exists(file)
				? mapper.readValue(file.toFile(), new TypeReference<List<Map<String, Object>>>() {
				})
				: List.of();
		List<Map<String, Object>> kept = new ArrayList<>();
		for (Map<String, Object> row : existing) {
			String name = String.valueOf(row.get("name"));
			if (!name.startsWith(PREFIX) && !name.equals(ENVIRONMENT)) {
				kept.add(row);
			}
		}
		int at = kept.size();
		for (int i = 0; i < kept.size(); i++) {
			if ("_environment".equals(kept.get(i).get("name"))) {
				at = i;
			}
		}
		List<Map<String, Object>> merged = new ArrayList<>(kept.subList(0, at));
		merged.addAll(rows(results));
		merged.addAll(kept.subList(at, kept.size()));
		Map<String, Object> env = new LinkedHashMap<>();
		env.put("name", ENVIRONMENT);
		env.put("unit", "info");
		env.putAll(environment);
		merged.add(env);
		Files.createDirectories(file.toAbsolutePath().getParent());
		Files.writeString(file, mapper.writeValueAsString(merged));
	}

	/** Bars relative to the raw driver sending our requests (1.0): ours, the peer, the raw driver sending the peer's. */
	static void writeSvg(Path file, List<PeerResult> results) throws IOException {
		List<String> groups = new ArrayList<>();
		List<double[]> values = new ArrayList<>();
		for (PeerResult r : results) {
			groups.add(r.name().substring(PREFIX.length()));
			double raw = r.rawMedian();
			values.add(new double[] { r.oursMedian() / raw, r.peerMedian() / raw,
					r.peerRaw().isEmpty() ? Double.NaN : Stats.median(r.peerRaw()) / raw });
		}
		Files.createDirectories(file.toAbsolutePath().getParent());
		Report.writeBarsSvg(file, "Throughput relative to the raw driver sending our requests (= 1.0), same run",
				"x raw", groups, List.of("ours", "Pekko Persistence Cassandra", "raw driver sending Pekko's requests"),
				values);
	}

	private static List<Double> spread(List<Double> rounds) {
		return List.of(round(Collections.min(rounds)), round(Stats.median(rounds)), round(Collections.max(rounds)));
	}

	private static double round(double value) {
		return Math.round(value * 100) / 100.0;
	}

}
