package io.cassandrajournal.benchmarks;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.HdrHistogram.Histogram;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Prints the table and writes {@code latest.json} and the SVG charts.
 */
final class Report {

	private Report() {
	}

	/**
	 * The printed table: first the rows whose other side is the raw driver doing the same work (their ratio is our
	 * overhead) and the rows without another side, then, under a heading of their own, the price rows
	 * ({@link Result#price}), each naming its other side, so that no one reads their ratio as overhead.
	 */
	static String table(List<Result> results) {
		StringBuilder out = new StringBuilder();
		out.append("ratio = ours / raw driver doing the same work (raw / ours for ms): our overhead\n");
		out.append(String.format(Locale.ROOT, "%-20s %-9s %12s %12s %7s %9s %9s%n", "workload", "unit", "ours", "raw", "ratio",
				"p50 ms", "p99 ms"));
		List<Result> prices = new ArrayList<>();
		for (Result r : results) {
			if (Result.PRICE.equals(r.kind())) {
				prices.add(r);
				continue;
			}
			out.append(String.format(Locale.ROOT, "%-20s %-9s %12.1f %12s %7s %9s %9s%n", r.name(), r.unit(), r.ours(),
					(r.raw() != null) ? String.format(Locale.ROOT, "%.1f", r.raw()) : "-",
					(r.ratio() != null) ? String.format(Locale.ROOT, "%.2f", r.ratio()) : "-",
					(r.p50Ms() != null) ? String.format(Locale.ROOT, "%.2f", r.p50Ms()) : "-",
					(r.p99Ms() != null) ? String.format(Locale.ROOT, "%.2f", r.p99Ms()) : "-"));
		}
		if (!prices.isEmpty()) {
			out.append(String.format(Locale.ROOT, "%nprices, not overhead: the other side is not the raw driver doing the "
					+ "same work; ratio = ours / other side%n"));
			out.append(String.format(Locale.ROOT, "%-24s %-9s %12s %12s %7s  %s%n", "workload", "unit", "ours", "other",
					"ratio", "other side"));
			for (Result r : prices) {
				out.append(String.format(Locale.ROOT, "%-24s %-9s %12.1f %12s %7s  %s%n", r.name(), r.unit(), r.ours(),
						(r.raw() != null) ? String.format(Locale.ROOT, "%.1f", r.raw()) : "-",
						(r.ratio() != null) ? String.format(Locale.ROOT, "%.2f", r.ratio()) : "-", r.otherSide()));
			}
		}
		return out.toString();
	}

	/**
	 * Writes the rows and the environment. Each row has {@code kind} ({@code overhead}: {@code raw} is the raw driver
	 * doing the same work; {@code price}: {@code raw} holds another side, named in {@code other_side}, so the ratio is
	 * a price; {@code alone}: no other side) and, with another side, {@code other_side}. A price row keeps its other
	 * side's figures in {@code raw}, {@code raw_min_median_max} and {@code ratio}, as before {@code kind} existed, so
	 * that readers of those fields keep working.
	 */
	static void writeJson(Path file, List<Result> results, Map<String, Object> environment) throws IOException {
		List<Map<String, Object>> rows = new ArrayList<>();
		for (Result r : results) {
			Map<String, Object> row = new LinkedHashMap<>();
			row.put("name", r.name());
			row.put("unit", r.unit());
			row.put("ours", round(r.ours()));
			row.put("raw", (r.raw() != null) ? round(r.raw()) : null);
			row.put("ratio", (r.ratio() != null) ? round(r.ratio()) : null);
			row.put("kind", r.kind());
			if (r.otherSide() != null) {
				row.put("other_side", r.otherSide());
			}
			if (r.p50Ms() != null) {
				row.put("p50_ms", round(r.p50Ms()));
				row.put("p99_ms", round(r.p99Ms()));
			}
			if (r.rawP50Ms() != null) {
				row.put("raw_p50_ms", round(r.rawP50Ms()));
				row.put("raw_p99_ms", round(r.rawP99Ms()));
			}
			if (!r.oursRounds().isEmpty()) {
				// The spread: min / median / max over the rounds, each side.
				row.put("ours_min_median_max", spread(r.oursRounds()));
				if (!r.rawRounds().isEmpty()) {
					row.put("raw_min_median_max", spread(r.rawRounds()));
				}
				row.put("rounds", r.oursRounds().size());
				if (r.rawRounds().size() == r.oursRounds().size() && !perRound(r).isEmpty()) {
					// Ours/raw of each round (both sides ran in it): the spread of the ratio itself.
					row.put("ratio_per_round_min_median_max", spread(perRound(r)));
				}
			}
			row.put("note", r.note());
			rows.add(row);
		}
		Map<String, Object> env = new LinkedHashMap<>(environment);
		env.put("heap_used_mb_ours", round(usedHeapMb()));
		Map<String, Object> meta = new LinkedHashMap<>();
		meta.put("name", "_environment");
		meta.put("unit", "info");
		meta.putAll(env);
		rows.add(meta);
		Files.createDirectories(file.getParent());
		JsonMapper mapper = JsonMapper.builder().enable(SerializationFeature.INDENT_OUTPUT).build();
		Files.writeString(file, mapper.writeValueAsString(rows));
	}

	/** @return ours/raw (raw/ours for latency) of each round */
	static List<Double> perRound(Result r) {
		List<Double> ratios = new ArrayList<>();
		for (int i = 0; i < r.oursRounds().size(); i++) {
			double ours = r.oursRounds().get(i);
			double raw = r.rawRounds().get(i);
			if (ours == 0 || raw == 0) {
				continue;
			}
			ratios.add("ms".equals(r.unit()) ? raw / ours : ours / raw);
		}
		return ratios;
	}

	private static List<Double> spread(List<Double> rounds) {
		return List.of(round(java.util.Collections.min(rounds)), round(Stats.median(rounds)),
				round(java.util.Collections.max(rounds)));
	}

	static double usedHeapMb() {
		Runtime rt = Runtime.getRuntime();
		return (rt.totalMemory() - rt.freeMemory()) / (1024.0 * 1024.0);
	}

	private static double round(double value) {
		return Math.round(value * 100) / 100.0;
	}

	/** The scaling curve: throughput against appends in flight (log scale), ours and raw. */
	static void writeScalingSvg(Path file, List<double[]> curve) throws IOException {
		int w = 640, h = 360, left = 70, bottom = 50, top = 30, right = 20;
		double max = 1;
		for (double[] p : curve) {
			max = Math.max(max, Math.max(p[1], p[2]));
		}
		StringBuilder svg = new StringBuilder(header(w, h, "Append throughput (append-lwt-1) by appends in flight"));
		axes(svg, w, h, left, bottom, top, right, max, "appends/s");
		double minX = Math.log(1), maxX = Math.log(256);
		String[] colors = { "#2e90fa", "#f79009" };
		for (int series = 1; series <= 2; series++) {
			StringBuilder path = new StringBuilder();
			for (double[] p : curve) {
				double x = left + (Math.log(p[0]) - minX) / (maxX - minX) * (w - left - right);
				double y = top + (1 - p[series] / max) * (h - top - bottom);
				path.append(path.isEmpty() ? "M" : "L").append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
				svg.append(String.format(Locale.ROOT, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>%n", x, y, colors[series - 1]));
			}
			svg.append("<path d='").append(path).append("' fill='none' stroke='").append(colors[series - 1])
				.append("' stroke-width='2'/>\n");
		}
		for (double[] p : curve) {
			double x = left + (Math.log(p[0]) - minX) / (maxX - minX) * (w - left - right);
			svg.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' text-anchor='middle'>%d</text>%n", x, h - bottom + 18,
					(int) p[0]));
		}
		svg.append(String.format(Locale.ROOT, "<text x='%d' y='%d' text-anchor='middle'>appends in flight</text>%n",
				(w + left) / 2, h - 12));
		legend(svg, w - 150, top + 10, new String[] { "ours", "raw driver" }, colors);
		Files.writeString(file, svg.append("</svg>\n").toString());
	}

	/** Latency distributions: percentile curves (p0 to p99.9) of each histogram. */
	static void writeLatencySvg(Path file, List<String> names, List<Histogram> histograms) throws IOException {
		int w = 640, h = 360, left = 70, bottom = 50, top = 30, right = 20;
		double[] percentiles = { 0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9 };
		double max = 0.001;
		for (Histogram histogram : histograms) {
			max = Math.max(max, Stats.ms(histogram, 99.9));
		}
		StringBuilder svg = new StringBuilder(header(w, h, "Latency by percentile (ms)"));
		axes(svg, w, h, left, bottom, top, right, max, "ms");
		String[] colors = { "#2e90fa", "#f79009", "#12b76a", "#7a5af8", "#f04438" };
		for (int s = 0; s < histograms.size(); s++) {
			StringBuilder path = new StringBuilder();
			for (int i = 0; i < percentiles.length; i++) {
				double x = left + (double) i / (percentiles.length - 1) * (w - left - right);
				double y = top + (1 - Stats.ms(histograms.get(s), percentiles[i]) / max) * (h - top - bottom);
				path.append(path.isEmpty() ? "M" : "L").append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
			}
			svg.append("<path d='").append(path).append("' fill='none' stroke='").append(colors[s % colors.length])
				.append("' stroke-width='2'/>\n");
		}
		for (int i = 0; i < percentiles.length; i++) {
			double x = left + (double) i / (percentiles.length - 1) * (w - left - right);
			svg.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' text-anchor='middle'>p%s</text>%n", x,
					h - bottom + 18, (percentiles[i] % 1 == 0) ? String.valueOf((int) percentiles[i]) : String.valueOf(percentiles[i])));
		}
		legend(svg, w - 220, top + 10, names.toArray(String[]::new), colors);
		Files.writeString(file, svg.append("</svg>\n").toString());
	}

	/**
	 * Grouped bars (used by the Pekko peer run, module benchmarks-peer): one group per workload, one bar per
	 * series, each value relative to the group's baseline (1.0, drawn as a line).
	 * @param values per group, one value per series (NaN: no bar)
	 */
	static void writeBarsSvg(Path file, String title, String unit, List<String> groups, List<String> series,
			List<double[]> values) throws IOException {
		// The legend above the bars, one line per series.
		int w = 640, left = 70, bottom = 50, top = 34 + 16 * series.size(), right = 20, h = 330 + top;
		double max = 1;
		for (double[] group : values) {
			for (double v : group) {
				max = Double.isNaN(v) ? max : Math.max(max, v);
			}
		}
		max = Math.ceil(max / 0.4) * 0.4;
		StringBuilder svg = new StringBuilder(header(w, h, title));
		axes(svg, w, h, left, bottom, top, right, max, unit);
		String[] colors = { "#2e90fa", "#f79009", "#12b76a", "#7a5af8" };
		double groupWidth = (double) (w - left - right) / groups.size();
		double barWidth = groupWidth * 0.8 / series.size();
		for (int g = 0; g < groups.size(); g++) {
			double x0 = left + g * groupWidth + groupWidth * 0.1;
			for (int s = 0; s < series.size(); s++) {
				double v = values.get(g)[s];
				if (Double.isNaN(v)) {
					continue;
				}
				double y = top + (1 - v / max) * (h - top - bottom);
				svg.append(String.format(Locale.ROOT, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>%n",
						x0 + s * barWidth, y, barWidth - 2, h - bottom - y, colors[s % colors.length]));
				svg.append(String.format(Locale.ROOT, "<text x='%.1f' y='%.1f' text-anchor='middle' font-size='9'>%.2f</text>%n",
						x0 + s * barWidth + barWidth / 2, y - 3, v));
			}
			svg.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' text-anchor='middle'>%s</text>%n",
					left + g * groupWidth + groupWidth / 2, h - bottom + 18, groups.get(g)));
		}
		double baseline = top + (1 - 1 / max) * (h - top - bottom);
		svg.append(String.format(Locale.ROOT, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#667085' "
				+ "stroke-dasharray='4 3'/>%n", left, baseline, w - right, baseline));
		legend(svg, left + 10, 28, series.toArray(String[]::new), colors);
		Files.writeString(file, svg.append("</svg>\n").toString());
	}

	private static String header(int w, int h, String title) {
		return String.format(Locale.ROOT, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
				+ "font-family='sans-serif' font-size='11'>%n<rect width='100%%' height='100%%' fill='white'/>%n"
				+ "<text x='%d' y='18' text-anchor='middle' font-size='13'>%s</text>%n", w, h, w / 2, title);
	}

	private static void axes(StringBuilder svg, int w, int h, int left, int bottom, int top, int right, double max,
			String unit) {
		for (int i = 0; i <= 4; i++) {
			double y = top + (h - top - bottom) * i / 4.0;
			svg.append(String.format(Locale.ROOT, "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#eaecf0'/>%n", left, y,
					w - right, y));
			svg.append(String.format(Locale.ROOT, "<text x='%d' y='%.1f' text-anchor='end'>%s</text>%n", left - 6, y + 4,
					format(max * (4 - i) / 4)));
		}
		svg.append(String.format(Locale.ROOT, "<text x='14' y='%d' transform='rotate(-90 14 %d)' text-anchor='middle'>%s</text>%n",
				(h) / 2, (h) / 2, unit));
	}

	private static String format(double value) {
		return (value >= 100) ? String.valueOf(Math.round(value)) : String.format(Locale.ROOT, "%.2f", value);
	}

	private static void legend(StringBuilder svg, int x, int y, String[] names, String[] colors) {
		for (int i = 0; i < names.length; i++) {
			svg.append(String.format(Locale.ROOT, "<rect x='%d' y='%d' width='10' height='10' fill='%s'/>"
					+ "<text x='%d' y='%d'>%s</text>%n", x, y + i * 16, colors[i % colors.length], x + 14, y + 9 + i * 16, names[i]));
		}
	}

}
