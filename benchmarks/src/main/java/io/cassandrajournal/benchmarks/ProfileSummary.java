package io.cassandrajournal.benchmarks;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordedStackTrace;
import jdk.jfr.consumer.RecordingFile;

/**
 * Summarises a flight recording of the benchmark JVM per workload and side, using the {@link Phase} events:
 * CPU samples (the hottest methods at the top of the stack, and the library's and driver's frames anywhere in
 * the stack) and the bytes allocated per event (from {@code jdk.ObjectAllocationSample} weights, by class).
 * <p>
 * Run: {@code java -cp benchmarks/target/classes io.cassandrajournal.benchmarks.ProfileSummary file.jfr [top]}.
 */
public final class ProfileSummary {

	private ProfileSummary() {
	}

	/** Time spans of one workload's side, and what they saw. */
	private static final class Side {

		final List<Instant[]> spans = new ArrayList<>();

		long events;

		long samples;

		double allocatedBytes;

		final Map<String, Long> topFrames = new HashMap<>();

		final Map<String, Long> inclusive = new HashMap<>();

		final Map<String, Double> allocatedByClass = new HashMap<>();

		final Map<String, Double> allocatedBySite = new HashMap<>();

		boolean contains(Instant time) {
			for (Instant[] span : this.spans) {
				if (!time.isBefore(span[0]) && !time.isAfter(span[1])) {
					return true;
				}
			}
			return false;
		}

	}

	public static void main(String[] args) throws Exception {
		Path file = Path.of(args[0]);
		int top = (args.length > 1) ? Integer.parseInt(args[1]) : 12;
		Map<String, Side> sides = new LinkedHashMap<>();
		try (RecordingFile recording = new RecordingFile(file)) {
			while (recording.hasMoreEvents()) {
				RecordedEvent event = recording.readEvent();
				if (event.getEventType().getName().equals("io.cassandrajournal.benchmarks.Phase")) {
					Side side = sides.computeIfAbsent(event.getString("workload") + " " + event.getString("side"),
							(k) -> new Side());
					side.spans.add(new Instant[] { event.getStartTime(), event.getEndTime() });
					side.events += event.getLong("events");
				}
			}
		}
		try (RecordingFile recording = new RecordingFile(file)) {
			while (recording.hasMoreEvents()) {
				RecordedEvent event = recording.readEvent();
				String type = event.getEventType().getName();
				boolean cpu = type.equals("jdk.ExecutionSample");
				boolean allocation = type.equals("jdk.ObjectAllocationSample");
				if (!cpu && !allocation) {
					continue;
				}
				for (Side side : sides.values()) {
					if (!side.contains(event.getStartTime())) {
						continue;
					}
					if (cpu) {
						sample(side, event.getStackTrace());
					}
					else {
						double weight = event.getLong("weight");
						side.allocatedBytes += weight;
						side.allocatedByClass.merge(event.getClass("objectClass").getName(), weight, Double::sum);
						side.allocatedBySite.merge(site(event.getStackTrace()), weight, Double::sum);
					}
				}
			}
		}
		for (Map.Entry<String, Side> entry : sides.entrySet()) {
			Side side = entry.getValue();
			System.out.printf(Locale.ROOT, "== %s: %d events, %d CPU samples, %.0f bytes allocated per event%n",
					entry.getKey(), side.events, side.samples, side.allocatedBytes / Math.max(1, side.events));
			print("top of stack", side.topFrames, side.samples, top);
			print("inclusive (library and driver frames)", side.inclusive, side.samples, top);
			System.out.println("  allocated per event, by class:");
			side.allocatedByClass.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
				.limit(top)
				.forEach((e) -> System.out.printf(Locale.ROOT, "    %8.1f B  %s%n", e.getValue() / Math.max(1, side.events),
						e.getKey()));
			System.out.println("  allocated per event, by the innermost library frame (else the innermost frame):");
			side.allocatedBySite.entrySet().stream().sorted(Map.Entry.<String, Double>comparingByValue().reversed())
				.limit(top)
				.forEach((e) -> System.out.printf(Locale.ROOT, "    %8.1f B  %s%n", e.getValue() / Math.max(1, side.events),
						e.getKey()));
		}
	}

	/** @return the innermost frame of the library (not the benchmark), else the innermost frame */
	private static String site(RecordedStackTrace stack) {
		if (stack == null || stack.getFrames().isEmpty()) {
			return "(no stack)";
		}
		for (RecordedFrame frame : stack.getFrames()) {
			String name = name(frame);
			if (name.startsWith("io.cassandrajournal.") && !name.startsWith("io.cassandrajournal.benchmarks.")) {
				return name + ":" + frame.getLineNumber();
			}
		}
		return name(stack.getFrames().get(0));
	}

	private static void sample(Side side, RecordedStackTrace stack) {
		if (stack == null || stack.getFrames().isEmpty()) {
			return;
		}
		side.samples++;
		side.topFrames.merge(name(stack.getFrames().get(0)), 1L, Long::sum);
		java.util.Set<String> seen = new java.util.HashSet<>();
		for (RecordedFrame frame : stack.getFrames()) {
			String name = name(frame);
			if ((name.startsWith("io.cassandrajournal.") || name.startsWith("com.datastax.") || name.startsWith("tools.jackson."))
					&& seen.add(name)) {
				side.inclusive.merge(name, 1L, Long::sum);
			}
		}
	}

	private static String name(RecordedFrame frame) {
		return frame.getMethod().getType().getName() + "." + frame.getMethod().getName();
	}

	private static void print(String title, Map<String, Long> counts, long samples, int top) {
		System.out.println("  " + title + ":");
		counts.entrySet().stream().sorted(Map.Entry.<String, Long>comparingByValue().reversed()).limit(top)
			.forEach((e) -> System.out.printf(Locale.ROOT, "    %5.1f%%  %s%n", 100.0 * e.getValue() / Math.max(1, samples),
					e.getKey()));
	}

}
