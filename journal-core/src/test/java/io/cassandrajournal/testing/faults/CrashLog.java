package io.cassandrajournal.testing.faults;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.cassandrajournal.testing.faults.History.OpKind;
import io.cassandrajournal.testing.faults.History.Outcome;

/**
 * The history of an application JVM that may be killed at any moment: one line per invocation, outcome and
 * append attempt, each handed to the operating system in one {@code write} before the operation goes on (a
 * {@code SIGKILL} of the JVM leaves a prefix of the lines; a torn last line is ignored). Operations are numbered
 * from a base the parent gives, under one lock with their invocation line, so the lines are in number order and
 * {@link #ingest} rebuilds the same numbers in the parent's {@link History}.
 * <p>
 * Lines: {@code R} ready; {@code I op kind client entity expected events value}; {@code C op outcome first last};
 * {@code A attempt persistenceId from to} (an append attempt sent); {@code E attempt} (it ended);
 * {@code L persistenceId from to} (a failed attempt that may hold its claim).
 */
final class CrashLog implements AutoCloseable {

	private final FileOutputStream out;

	private int nextOp;

	private long nextAttempt;

	CrashLog(Path file, int base) {
		try {
			this.out = new FileOutputStream(file.toFile(), true);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		this.nextOp = base;
	}

	private void line(String text) {
		try {
			this.out.write((text + "\n").getBytes(StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	synchronized void ready() {
		line("R");
	}

	synchronized int invoke(OpKind kind, int client, int entity, long expected, int events, long value) {
		int op = this.nextOp++;
		line("I " + op + " " + kind + " " + client + " " + entity + " " + expected + " " + events + " " + value);
		return op;
	}

	synchronized void complete(int op, Outcome outcome, long first, long last) {
		line("C " + op + " " + outcome + " " + first + " " + last);
	}

	synchronized long attempt(String persistenceId, long from, long to) {
		long attempt = this.nextAttempt++;
		line("A " + attempt + " " + persistenceId + " " + from + " " + to);
		return attempt;
	}

	synchronized void attemptEnded(long attempt) {
		line("E " + attempt);
	}

	synchronized void lostClaim(AttemptRecordingJournal.LostClaim lost) {
		line("L " + lost.persistenceId() + " " + lost.from() + " " + lost.to());
	}

	@Override
	public synchronized void close() throws IOException {
		this.out.close();
	}

	/** @return whether the log has its ready line */
	static boolean isReady(Path file) throws IOException {
		return Files.exists(file) && Files.readString(file, StandardCharsets.UTF_8).startsWith("R\n");
	}

	/** @return how many operations completed so far */
	static long completed(Path file) throws IOException {
		if (!Files.exists(file)) {
			return 0;
		}
		return Files.readAllLines(file, StandardCharsets.UTF_8).stream().filter((l) -> l.startsWith("C ")).count();
	}

	/**
	 * What a killed JVM's log says, added to the parent's history.
	 *
	 * @param operations operations invoked
	 * @param pending operations invoked and never completed (in flight at the kill)
	 * @param inFlightAttempts append attempts sent and never ended: they may hold their claim
	 * @param lostClaims attempts that failed and may hold their claim
	 */
	record Ingested(int operations, int pending, List<AttemptRecordingJournal.LostClaim> inFlightAttempts,
			List<AttemptRecordingJournal.LostClaim> lostClaims) {
	}

	/**
	 * @param file a log
	 * @param history the parent's history; the log's operations must start at its size
	 * @return what was added
	 * @throws IOException if the log cannot be read
	 */
	static Ingested ingest(Path file, History history) throws IOException {
		List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
		String raw = Files.readString(file, StandardCharsets.UTF_8);
		if (!raw.isEmpty() && !raw.endsWith("\n")) {
			// A line torn by the kill: its operation was never sent.
			lines.remove(lines.size() - 1);
		}
		Map<Long, AttemptRecordingJournal.LostClaim> attempts = new HashMap<>();
		List<AttemptRecordingJournal.LostClaim> lost = new ArrayList<>();
		int operations = 0;
		int completed = 0;
		for (String line : lines) {
			String[] f = line.split(" ");
			switch (f[0]) {
				case "I" -> {
					int op = history.invoke(OpKind.valueOf(f[2]), Integer.parseInt(f[3]), Integer.parseInt(f[4]),
							Long.parseLong(f[5]), Integer.parseInt(f[6]), Long.parseLong(f[7]));
					if (op != Integer.parseInt(f[1])) {
						throw new IllegalStateException("operation " + f[1] + " of " + file + " became " + op);
					}
					operations++;
				}
				case "C" -> {
					history.complete(Integer.parseInt(f[1]), Outcome.valueOf(f[2]), Long.parseLong(f[3]),
							Long.parseLong(f[4]));
					completed++;
				}
				case "A" -> attempts.put(Long.parseLong(f[1]),
						new AttemptRecordingJournal.LostClaim(f[2], Long.parseLong(f[3]), Long.parseLong(f[4])));
				case "E" -> attempts.remove(Long.parseLong(f[1]));
				case "L" -> lost.add(new AttemptRecordingJournal.LostClaim(f[1], Long.parseLong(f[2]), Long.parseLong(f[3])));
				default -> {
				}
			}
		}
		return new Ingested(operations, operations - completed, List.copyOf(attempts.values()), lost);
	}

}
