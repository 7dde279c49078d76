package io.cassandrajournal.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.jspecify.annotations.Nullable;

/** A real session that counts the requests it sends. */
public final class CountingSession {

	private final CqlSession delegate;

	private final AtomicInteger requests = new AtomicInteger();

	private volatile int budget = Integer.MAX_VALUE;

	private volatile @Nullable Thread watched;

	private final AtomicInteger byWatched = new AtomicInteger();

	private final AtomicInteger serialReads = new AtomicInteger();

	private final Queue<String> queries = new ConcurrentLinkedQueue<>();

	public CountingSession(CqlSession delegate) {
		this.delegate = delegate;
	}

	public CqlSession session() {
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				(proxy, method, args) -> {
					if (method.getName().startsWith("execute") && Thread.currentThread() == this.watched) {
						this.byWatched.incrementAndGet();
					}
					if (method.getName().startsWith("execute") && args != null && args.length > 0) {
						this.queries.add(describe(args[0]));
					}
					if (method.getName().startsWith("execute") && args != null && args.length > 0
							&& args[0] instanceof Statement<?> statement && statement.getConsistencyLevel() != null
							&& statement.getConsistencyLevel().isSerial()) {
						this.serialReads.incrementAndGet();
					}
					if (method.getName().startsWith("execute") && this.requests.incrementAndGet() > this.budget) {
						throw new IllegalStateException("more than " + this.budget + " requests since the last takeCount()");
					}
					try {
						return method.invoke(this.delegate, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	/**
	 * Makes every request beyond {@code max} (counted since the last {@link #takeCount()}) throw on the calling
	 * thread, so a runaway loop stops instead of flooding the node.
	 * @param max requests allowed
	 */
	public void limitTo(int max) {
		this.budget = max;
	}

	/**
	 * Starts counting the requests one thread sends itself (not those sent later from callbacks on driver
	 * threads): tells whether an operation works on its caller's thread.
	 * @param thread the thread
	 */
	public void watch(Thread thread) {
		this.byWatched.set(0);
		this.watched = thread;
	}

	/** @return requests the watched thread sent since {@link #watch(Thread)} */
	public int requestsByWatchedThread() {
		return this.byWatched.get();
	}

	/** @return reads at a serial consistency level (each a Paxos round on its row) sent since the last call */
	public int takeSerialReads() {
		return this.serialReads.getAndSet(0);
	}

	/** @return requests sent since the last call */
	public int takeCount() {
		return this.requests.getAndSet(0);
	}

	/**
	 * @return every request sent since the last call, in order: its CQL text, a serial read's text prefixed with
	 * {@code "SERIAL "}, a simple statement's positional values after {@code " | "} (a bound statement's values are not
	 * shown)
	 */
	public List<String> takeQueries() {
		List<String> taken = new ArrayList<>();
		for (String query = this.queries.poll(); query != null; query = this.queries.poll()) {
			taken.add(query);
		}
		return taken;
	}

	private static String describe(Object request) {
		String serial = (request instanceof Statement<?> statement && statement.getConsistencyLevel() != null
				&& statement.getConsistencyLevel().isSerial()) ? "SERIAL " : "";
		if (request instanceof SimpleStatement simple) {
			return serial + simple.getQuery()
					+ (simple.getPositionalValues().isEmpty() ? "" : " | " + simple.getPositionalValues());
		}
		if (request instanceof BoundStatement bound) {
			return serial + bound.getPreparedStatement().getQuery();
		}
		return serial + request;
	}

}
