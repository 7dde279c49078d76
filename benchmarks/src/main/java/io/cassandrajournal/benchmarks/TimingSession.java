package io.cassandrajournal.benchmarks;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.cql.Statement;

/**
 * Records when each request of one client started and ended, by kind ({@code SELECT events_by_tag},
 * {@code UPDATE durable_state}, ...): a session that hands every call to the real one and, for
 * {@code executeAsync(Statement)} (the only way the journal's readers and stores query), notes the start and
 * the completion of the first page. Used to take a projection's wake-up latency apart: which reads and offset
 * saves ran between an append's completion and the handler's call.
 */
final class TimingSession {

	private static final Pattern KIND = Pattern.compile(
			"^\\s*(SELECT\\b.*?\\bFROM|UPDATE|INSERT\\s+INTO|DELETE\\b.*?\\bFROM)\\s+(?:[\\w\"]+\\.)?([\\w\"]+)",
			Pattern.CASE_INSENSITIVE | Pattern.DOTALL);

	/**
	 * One request.
	 * @param kind first keyword and table, such as {@code SELECT events_by_tag}
	 * @param startNanos when it was sent ({@link System#nanoTime()})
	 * @param endNanos when its first page or its failure arrived
	 * @param rows rows of its first page (0 for a write or a failure)
	 * @param behindMillis for a bounded tag read ({@code ... AND (timestamp) <= (?) LIMIT ?}), how far its upper
	 * bound lay behind the wall clock when it was sent (the trailing sweep reads 10 s behind, the head at once);
	 * -1 for other requests
	 */
	record Call(String kind, long startNanos, long endNanos, int rows, long behindMillis) {

		double millis() {
			return (this.endNanos - this.startNanos) / 1e6;
		}

	}

	private final ConcurrentLinkedQueue<Call> calls = new ConcurrentLinkedQueue<>();

	private final CqlSession session;

	private volatile boolean recording;

	TimingSession(CqlSession delegate) {
		InvocationHandler handler = (proxy, method, args) -> invoke(delegate, method, args);
		this.session = (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(),
				new Class<?>[] { CqlSession.class }, handler);
	}

	/** @return the session to hand to the component whose requests are timed */
	CqlSession session() {
		return this.session;
	}

	/** Starts or stops recording (requests are recorded only in between). */
	void recording(boolean on) {
		this.recording = on;
	}

	/** @return the recorded requests, by start time */
	List<Call> calls() {
		List<Call> sorted = new ArrayList<>(this.calls);
		sorted.sort(Comparator.comparingLong(Call::startNanos));
		return sorted;
	}

	private Object invoke(CqlSession delegate, Method method, Object[] args) throws Throwable {
		long started = System.nanoTime();
		Object result;
		try {
			result = method.invoke(delegate, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
		if (this.recording && "executeAsync".equals(method.getName()) && args != null && args.length == 1
				&& args[0] instanceof Statement<?> statement) {
			String kind = kind(statement);
			long behind = behindMillis(statement);
			// The caller gets the stage that completes after this note: its own stages (which consume the rows) run
			// after it, not before (a CompletableFuture runs the dependents of one stage newest first).
			return ((CompletionStage<?>) result).whenComplete((page, error) -> this.calls.add(new Call(kind, started,
					System.nanoTime(), (page instanceof AsyncResultSet rs) ? rs.remaining() : 0, behind)));
		}
		return result;
	}

	/** @return how far a bounded tag read's upper time stamp lies behind now, in ms; -1 if not such a read */
	private static long behindMillis(Statement<?> statement) {
		if (statement instanceof BoundStatement bound && bound.size() == 6
				&& bound.getPreparedStatement().getQuery().contains("(timestamp) <= (?) LIMIT ?")) {
			return Math.max(0, System.currentTimeMillis() - bound.getLong(4));
		}
		return -1;
	}

	static String kind(Statement<?> statement) {
		if (statement instanceof BatchStatement) {
			return "BATCH";
		}
		String cql = (statement instanceof BoundStatement bound) ? bound.getPreparedStatement().getQuery()
				: (statement instanceof SimpleStatement simple) ? simple.getQuery() : "";
		Matcher matcher = KIND.matcher(cql);
		if (!matcher.find()) {
			return "OTHER";
		}
		String verb = matcher.group(1).trim().split("\\s+")[0].toUpperCase(Locale.ROOT);
		return verb + " " + matcher.group(2).replace("\"", "");
	}

}
