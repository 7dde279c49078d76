package io.cassandrajournal.benchmarks;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ColumnDefinitions;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.cql.Statement;

/**
 * Counts the rows Cassandra returns to one client, per table read: a session that hands every call to the real
 * one and, for {@code executeAsync(Statement)} (the only way the journal's readers query), counts the rows of
 * each page as it arrives, the pages fetched later included. Used to measure read amplification: rows a
 * projection instance reads per event it handles.
 */
final class CountingSession {

	private static final Pattern FROM = Pattern.compile("\\bFROM\\s+([\\w.\"]+)", Pattern.CASE_INSENSITIVE);

	private final Map<String, LongAdder> rowsByTable = new ConcurrentHashMap<>();

	private final CqlSession session;

	CountingSession(CqlSession delegate) {
		InvocationHandler handler = (proxy, method, args) -> invoke(delegate, method, args);
		this.session = (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(),
				new Class<?>[] { CqlSession.class }, handler);
	}

	/** @return the session to hand to the component whose reads are counted */
	CqlSession session() {
		return this.session;
	}

	/** @return rows returned so far, per table ({@code keyspace.table} as written in the query) */
	Map<String, Long> rowsByTable() {
		Map<String, Long> rows = new TreeMap<>();
		this.rowsByTable.forEach((table, n) -> rows.put(table, n.sum()));
		return rows;
	}

	/** @return rows returned so far from tables whose name contains {@code part} */
	long rows(String part) {
		return rowsByTable().entrySet().stream().filter((e) -> e.getKey().contains(part)).mapToLong(Map.Entry::getValue).sum();
	}

	@SuppressWarnings("unchecked")
	private Object invoke(CqlSession delegate, Method method, Object[] args) throws Throwable {
		Object result;
		try {
			result = method.invoke(delegate, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
		if ("executeAsync".equals(method.getName()) && args != null && args.length == 1
				&& args[0] instanceof Statement<?> statement) {
			LongAdder rows = this.rowsByTable.computeIfAbsent(table(statement), (t) -> new LongAdder());
			return ((CompletionStage<AsyncResultSet>) result).thenApply((page) -> new Counted(page, rows));
		}
		return result;
	}

	private static String table(Statement<?> statement) {
		String cql = (statement instanceof BoundStatement bound) ? bound.getPreparedStatement().getQuery()
				: (statement instanceof SimpleStatement simple) ? simple.getQuery() : "";
		Matcher from = FROM.matcher(cql);
		return from.find() ? from.group(1) : "(no table read)";
	}

	/** A page whose rows were counted on arrival; the pages after it are counted as they arrive. */
	private record Counted(AsyncResultSet page, LongAdder rows) implements AsyncResultSet {

		Counted {
			rows.add(page.remaining());
		}

		@Override
		public ColumnDefinitions getColumnDefinitions() {
			return this.page.getColumnDefinitions();
		}

		@Override
		public ExecutionInfo getExecutionInfo() {
			return this.page.getExecutionInfo();
		}

		@Override
		public int remaining() {
			return this.page.remaining();
		}

		@Override
		public Iterable<Row> currentPage() {
			return this.page.currentPage();
		}

		@Override
		public boolean hasMorePages() {
			return this.page.hasMorePages();
		}

		@Override
		public CompletionStage<AsyncResultSet> fetchNextPage() {
			return this.page.fetchNextPage().thenApply((next) -> new Counted(next, this.rows));
		}

		@Override
		public boolean wasApplied() {
			return this.page.wasApplied();
		}

	}

}
