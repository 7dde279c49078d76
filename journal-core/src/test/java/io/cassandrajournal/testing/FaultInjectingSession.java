package io.cassandrajournal.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Statement;

/**
 * A real session with switchable failures: while armed, statements matching a predicate fail with a
 * driver timeout instead of reaching Cassandra. Everything else goes to the real node.
 */
public final class FaultInjectingSession {

	private final CqlSession delegate;

	private volatile Predicate<Statement<?>> failing = (s) -> false;

	private final AtomicInteger injected = new AtomicInteger();

	private volatile long batchDelayMillis;

	private final Object failOnceLock = new Object();

	private String failOnceCql;

	private int failOncePassing;

	public FaultInjectingSession(CqlSession delegate) {
		this.delegate = delegate;
	}

	public CqlSession session() {
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				this::invoke);
	}

	/** Fails every batch (the event writes) until {@link #heal()}. */
	public void failBatches() {
		this.failing = (s) -> s instanceof BatchStatement;
	}

	/** Fails batches and conditional releases: the append dies between claim and events, as in a crash. */
	public void failEverythingButTheClaim() {
		this.failing = (s) -> s instanceof BatchStatement || (s instanceof BoundStatement bound
				&& (bound.getPreparedStatement().getQuery().startsWith("DELETE")
						|| (bound.getPreparedStatement().getQuery().contains(" IF max_sequence_nr")
								&& injected.get() > 0)));
	}

	/** Delays every batch: the events are stamped and claimed, then become visible this much later. */
	public void delayBatches(java.time.Duration delay) {
		this.batchDelayMillis = delay.toMillis();
	}

	/**
	 * Fails one read: the next statement whose CQL contains {@code cqlFragment} fails with a driver timeout,
	 * after {@code passing} such statements went through; later ones reach the node again.
	 * @param cqlFragment a part of the statement's CQL, for example {@code "FROM ks.events_by_tag"}
	 * @param passing matching statements to let through first
	 */
	public void failOnce(String cqlFragment, int passing) {
		synchronized (this.failOnceLock) {
			this.failOnceCql = cqlFragment;
			this.failOncePassing = passing;
		}
	}

	/** Fails the next statement whose CQL contains {@code cqlFragment}, once (see {@link #failOnce(String, int)}). */
	public void failOnce(String cqlFragment) {
		failOnce(cqlFragment, 0);
	}

	private boolean takeFailOnce(Statement<?> statement) {
		String cql = (statement instanceof BoundStatement bound) ? bound.getPreparedStatement().getQuery()
				: (statement instanceof com.datastax.oss.driver.api.core.cql.SimpleStatement simple) ? simple.getQuery()
						: "";
		synchronized (this.failOnceLock) {
			if (this.failOnceCql == null || !cql.contains(this.failOnceCql)) {
				return false;
			}
			if (this.failOncePassing > 0) {
				this.failOncePassing--;
				return false;
			}
			this.failOnceCql = null;
			return true;
		}
	}

	public void heal() {
		this.failing = (s) -> false;
	}

	public int injected() {
		return this.injected.get();
	}

	private Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
		if (method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof Statement<?> statement && (this.failing.test(statement) || takeFailOnce(statement))) {
			this.injected.incrementAndGet();
			return CompletableFuture.failedFuture(new DriverTimeoutException("injected failure"));
		}
		if (this.batchDelayMillis > 0 && method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof BatchStatement) {
			java.util.concurrent.Executor later = CompletableFuture.delayedExecutor(this.batchDelayMillis,
					java.util.concurrent.TimeUnit.MILLISECONDS);
			return CompletableFuture.supplyAsync(() -> null, later)
				.thenCompose((ignored) -> this.delegate.executeAsync((Statement<?>) args[0]));
		}
		try {
			return method.invoke(this.delegate, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

}
