package io.cassandrajournal.benchmarks;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.jspecify.annotations.Nullable;

/**
 * Puts the benchmark's JVM and the node it started on separate cores, as if client and server ran on machines of
 * their own: on two shared cores the node's compactions and flushes and the client's garbage collection take turns
 * on either core, and a round's figure then measures who was scheduled where more than the code under test.
 * <p>
 * Uses {@code taskset} (util-linux) on every thread of each process; threads started later inherit their
 * creator's affinity. A process started later by the benchmark's JVM (a failover instance) inherits the client's
 * core. The node is told it has one core ({@code CassandraNode.Builder.processors}). Pinning needs at least two cores and {@code taskset}; without them the run goes on unpinned and says so.
 */
final class CpuPinning {

	private CpuPinning() {
	}

	/** @return whether {@link #pin} can put client and node on a core each: two cores or more, and taskset */
	static boolean possible() {
		if (allowedCpus().size() < 2) {
			return false;
		}
		try {
			Process process = new ProcessBuilder("taskset", "--version").redirectErrorStream(true).start();
			process.getInputStream().readAllBytes();
			return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
		}
		catch (IOException ex) {
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * Pins this JVM to the first allowed core and the node's process to the last. The node should have been
	 * started with {@code processors(1)}: sized for more cores than it runs on, its request executors spin away
	 * the one core (a first pinned run without it had not finished its first workload after ten minutes, two
	 * thirds of the node's core going to the kernel).
	 * @param nodePid the node's process id
	 * @return what was done, for the report's environment: {@code "client cpu 0, node cpu 1"}, or why not
	 */
	static String pin(long nodePid) {
		List<Integer> cpus = allowedCpus();
		if (cpus.size() < 2) {
			return "none (" + cpus.size() + " core allowed)";
		}
		int client = cpus.get(0);
		int server = cpus.get(cpus.size() - 1);
		String failure = taskset(ProcessHandle.current().pid(), client);
		if (failure == null) {
			failure = taskset(nodePid, server);
		}
		if (failure != null) {
			return "none (" + failure + ")";
		}
		return "client cpu " + client + ", node cpu " + server;
	}

	/** @return the cores this process may run on, from {@code /proc/self/status}, or 0..n-1 if unreadable */
	static List<Integer> allowedCpus() {
		try {
			for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.US_ASCII)) {
				if (line.startsWith("Cpus_allowed_list:")) {
					return parseList(line.substring("Cpus_allowed_list:".length()).trim());
				}
			}
		}
		catch (IOException | RuntimeException ex) {
			// not Linux, or no such line: fall through
		}
		return java.util.stream.IntStream.range(0, Runtime.getRuntime().availableProcessors()).boxed().toList();
	}

	/** @param list a kernel CPU list such as {@code 0-3,6} */
	static List<Integer> parseList(String list) {
		java.util.ArrayList<Integer> cpus = new java.util.ArrayList<>();
		for (String part : list.split(",")) {
			String[] range = part.trim().split("-");
			int from = Integer.parseInt(range[0].trim());
			int to = (range.length > 1) ? Integer.parseInt(range[1].trim()) : from;
			for (int cpu = from; cpu <= to; cpu++) {
				cpus.add(cpu);
			}
		}
		return cpus;
	}

	/** @return null if done, else what went wrong */
	private static @Nullable String taskset(long pid, int cpu) {
		try {
			Process process = new ProcessBuilder("taskset", "--all-tasks", "--pid", "--cpu-list", Integer.toString(cpu),
					Long.toString(pid))
				.redirectErrorStream(true)
				.start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
			if (!process.waitFor(30, TimeUnit.SECONDS)) {
				process.destroyForcibly();
				return "taskset did not answer within 30 s";
			}
			return (process.exitValue() == 0) ? null : "taskset exited " + process.exitValue() + ": " + output;
		}
		catch (IOException ex) {
			return "taskset not found: " + ex.getMessage();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return "interrupted";
		}
	}

}
