package io.cassandrajournal.testing.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.jspecify.annotations.Nullable;

/**
 * Every operation of a run, its invocation and its outcome, in six {@code long}s each (48 bytes), so 100,000
 * operations take under 5 MB; a failed or unknown operation also keeps its exception as one short line (class
 * chain and messages, at most {@value #FAILURE_CHARS} characters, equal lines shared). Operations are numbered in the
 * order they were invoked; the number is the operation's identity and goes into the events it writes
 * ({@link FaultEvent#op()}), so the checker can tell whose event a row holds.
 * <p>
 * A client thread invokes and completes its own operations; the history is read after every client has
 * finished ({@link Thread#join()} orders the writes before the reads).
 */
public final class History {

	/** What an operation does. New capabilities add kinds (and rules in {@link HistoryChecker}). */
	public enum OpKind {

		/** An append with an expected sequence number, on a contended entity. */
		APPEND,
		/** An account command through an entity repository: deposit. */
		DEPOSIT,
		/** An account command through an entity repository: withdrawal, rejected when it would overdraw. */
		WITHDRAW,
		/**
		 * {@code deleteTo(n)} on a contended entity: n is the expected number; its range holds the lowest and
		 * highest number a replay returned right after it was acknowledged (0 if it returned none or failed).
		 */
		DELETE_TO

	}

	/** How an operation ended. */
	public enum Outcome {

		/** Not completed (the run ended while it was in flight): treated as unknown. */
		PENDING,
		/** Acknowledged. */
		OK,
		/** Certainly not applied: a concurrency conflict or a definite error. */
		FAILED,
		/** Rejected by the command (the invariant): certainly not applied. */
		REJECTED,
		/** May or may not have been applied: an uncertain write or a timeout. */
		UNKNOWN

	}

	private static final int FIELDS = 6;

	private static final int CHUNK = 8192;

	private final long[][] chunks = new long[1 << 14][];

	private final AtomicInteger next = new AtomicInteger();

	private final long startNanos = System.nanoTime();

	private final List<String> entities = new ArrayList<>();

	/** The most characters of an operation's failure line. */
	static final int FAILURE_CHARS = 400;

	/** Per chunk of operations, their failure lines (null where none). */
	private final String[][] failures = new String[1 << 14][];

	private final Map<String, String> failureLines = new ConcurrentHashMap<>();

	private final AtomicLong failureBytes = new AtomicLong();

	/**
	 * @param persistenceId an entity the run uses
	 * @return its number in this history
	 */
	public synchronized int entity(String persistenceId) {
		this.entities.add(persistenceId);
		return this.entities.size() - 1;
	}

	public synchronized String entityName(int entity) {
		return this.entities.get(entity);
	}

	public synchronized int entityCount() {
		return this.entities.size();
	}

	/**
	 * Records an invocation.
	 * @param kind the operation
	 * @param client the client (thread) number
	 * @param entity the entity number
	 * @param expected the expected sequence number (appends); 0 for commands
	 * @param events how many events it writes if it succeeds (commands: 1)
	 * @param value the amount of a command; 0 for appends
	 * @return the operation's number
	 */
	public int invoke(OpKind kind, int client, int entity, long expected, int events, long value) {
		int op = this.next.getAndIncrement();
		long[] chunk = chunk(op);
		int at = (op % CHUNK) * FIELDS;
		chunk[at] = kind.ordinal() | ((long) Outcome.PENDING.ordinal() << 8) | ((long) (client & 0xFFFF) << 16)
				| ((long) (entity & 0xFFFF) << 32) | ((long) (events & 0xFFFF) << 48);
		chunk[at + 1] = expected;
		chunk[at + 2] = value;
		chunk[at + 3] = 0;
		chunk[at + 4] = micros();
		chunk[at + 5] = -1;
		return op;
	}

	/**
	 * Records an outcome.
	 * @param op the operation
	 * @param outcome how it ended
	 * @param first the first sequence number it wrote (OK), may have written (UNKNOWN), 0 if not known
	 * @param last the last such sequence number; for a concurrency conflict the head it lost to
	 */
	public void complete(int op, Outcome outcome, long first, long last) {
		long[] chunk = chunk(op);
		int at = (op % CHUNK) * FIELDS;
		chunk[at] = (chunk[at] & ~0xFF00L) | ((long) outcome.ordinal() << 8);
		// first and last share a word: sequence numbers stay far below 2^31 in a run.
		chunk[at + 3] = (first << 32) | (last & 0xFFFFFFFFL);
		chunk[at + 5] = micros();
	}

	/**
	 * Keeps why an operation failed (or has an unknown outcome), for the history excerpts of violations.
	 * @param op the operation
	 * @param failure its exception
	 */
	public void failure(int op, Throwable failure) {
		String line = failureLine(failure);
		String shared = this.failureLines.putIfAbsent(line, line);
		if (shared == null) {
			shared = line;
			this.failureBytes.addAndGet(40 + line.length());
		}
		int index = op / CHUNK;
		String[] chunk;
		synchronized (this.failures) {
			chunk = this.failures[index];
			if (chunk == null) {
				chunk = new String[CHUNK];
				this.failures[index] = chunk;
			}
			chunk[op % CHUNK] = shared;
		}
	}

	/**
	 * @param op an operation
	 * @return why it failed, as {@link #failure(int, Throwable)} kept it; null if it did not fail
	 */
	public @Nullable String failure(int op) {
		synchronized (this.failures) {
			String[] chunk = this.failures[op / CHUNK];
			return (chunk != null) ? chunk[op % CHUNK] : null;
		}
	}

	/**
	 * @param failure an exception
	 * @return one line: the class chain from the outside in, each with its message where it says something the
	 * outer one did not, cut to {@value #FAILURE_CHARS} characters
	 */
	static String failureLine(Throwable failure) {
		StringBuilder line = new StringBuilder();
		String outer = "";
		int depth = 0;
		for (Throwable t = failure; t != null && depth < 8 && line.length() < FAILURE_CHARS; t = t.getCause(), depth++) {
			if (depth > 0) {
				line.append(" <- ");
			}
			line.append(t.getClass().getSimpleName());
			String message = t.getMessage();
			if (message != null && !message.isBlank() && !outer.contains(message)) {
				line.append('(').append((message.length() > 160) ? message.substring(0, 160) + "..." : message).append(')');
				outer = message;
			}
			if (t.getCause() == t) {
				break;
			}
		}
		return (line.length() > FAILURE_CHARS) ? line.substring(0, FAILURE_CHARS) + "..." : line.toString();
	}

	private long micros() {
		return (System.nanoTime() - this.startNanos) / 1000;
	}

	private long[] chunk(int op) {
		int index = op / CHUNK;
		long[] chunk = this.chunks[index];
		if (chunk == null) {
			synchronized (this.chunks) {
				chunk = this.chunks[index];
				if (chunk == null) {
					chunk = new long[CHUNK * FIELDS];
					this.chunks[index] = chunk;
				}
			}
		}
		return chunk;
	}

	public int size() {
		return this.next.get();
	}

	/** @return bytes the records take (the arrays of the chunks in use) */
	public long retainedBytes() {
		long chunksInUse = (size() + CHUNK - 1) / CHUNK;
		long failureChunks;
		synchronized (this.failures) {
			failureChunks = java.util.Arrays.stream(this.failures).filter(java.util.Objects::nonNull).count();
		}
		return chunksInUse * (16 + CHUNK * FIELDS * 8L) + this.chunks.length * 4L + this.failures.length * 4L
				+ failureChunks * (16 + CHUNK * 4L) + this.failureBytes.get();
	}

	private long field(int op, int field) {
		synchronized (this.chunks) {
			return this.chunks[op / CHUNK][(op % CHUNK) * FIELDS + field];
		}
	}

	public OpKind kind(int op) {
		return OpKind.values()[(int) (field(op, 0) & 0xFF)];
	}

	public Outcome outcome(int op) {
		return Outcome.values()[(int) ((field(op, 0) >>> 8) & 0xFF)];
	}

	public int client(int op) {
		return (int) ((field(op, 0) >>> 16) & 0xFFFF);
	}

	public int entityOf(int op) {
		return (int) ((field(op, 0) >>> 32) & 0xFFFF);
	}

	public int events(int op) {
		return (int) ((field(op, 0) >>> 48) & 0xFFFF);
	}

	public long expected(int op) {
		return field(op, 1);
	}

	public long value(int op) {
		return field(op, 2);
	}

	public long first(int op) {
		return field(op, 3) >>> 32;
	}

	public long last(int op) {
		return field(op, 3) & 0xFFFFFFFFL;
	}

	public long invokedMicros(int op) {
		return field(op, 4);
	}

	/** @return when it completed, -1 if it did not */
	public long completedMicros(int op) {
		return field(op, 5);
	}

	/**
	 * @param op an operation
	 * @return one line for a report (strings are made only here, for the few operations a report shows)
	 */
	public String describe(int op) {
		StringBuilder line = new StringBuilder();
		line.append(String.format("#%d t=%.3fs..", op, invokedMicros(op) / 1e6));
		long done = completedMicros(op);
		line.append((done < 0) ? "?" : String.format("%.3fs", done / 1e6));
		line.append(" client ").append(client(op)).append(' ').append(kind(op)).append(' ').append(entityName(entityOf(op)));
		if (kind(op) == OpKind.APPEND) {
			line.append(" expected ").append(expected(op)).append(" +").append(events(op));
		}
		else if (kind(op) == OpKind.DELETE_TO) {
			line.append(" to ").append(expected(op));
		}
		else {
			line.append(" amount ").append(value(op));
		}
		line.append(" -> ").append(outcome(op));
		if (first(op) != 0 || last(op) != 0) {
			line.append(" [").append(first(op)).append("..").append(last(op)).append(']');
		}
		String failure = failure(op);
		if (failure != null) {
			line.append(": ").append(failure);
		}
		return line.toString();
	}

}
