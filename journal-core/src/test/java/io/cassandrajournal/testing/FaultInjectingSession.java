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

	private volatile Predicate<Statement<?>> appliedButTimedOut = (s) -> false;

	private final AtomicInteger appliedButTimedOutLeft = new AtomicInteger();

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
	 * The next {@code times} statements matching {@code which} reach the real node and are applied there, but
	 * the caller gets a write timeout of a compare-and-set ({@code WriteType.CAS}): the outcome a client
	 * cannot tell from a write that was lost.
	 */
	public void applyThenTimeOut(Predicate<Statement<?>> which, int times) {
		this.appliedButTimedOutLeft.set(times);
		this.appliedButTimedOut = which;
	}

	/** Fails every statement matching {@code which} with a driver timeout until {@link #heal()}. */
	public void failMatching(Predicate<Statement<?>> which) {
		this.failing = which;
	}

	/** @return a predicate on bound statements whose CQL contains {@code text} */
	public static Predicate<Statement<?>> cqlContains(String text) {
		return (s) -> s instanceof BoundStatement bound && bound.getPreparedStatement().getQuery().contains(text);
	}

	public void heal() {
		this.failing = (s) -> false;
	}

	public int injected() {
		return this.injected.get();
	}

	private Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
		if (method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof Statement<?> applied && this.appliedButTimedOut.test(applied)
				&& this.appliedButTimedOutLeft.getAndDecrement() > 0) {
			this.injected.incrementAndGet();
			com.datastax.oss.driver.api.core.metadata.Node coordinator = this.delegate.getMetadata().getNodes().values()
				.iterator().next();
			return this.delegate.executeAsync(applied).toCompletableFuture().thenCompose((rs) -> CompletableFuture
				.failedFuture(new com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException(coordinator,
						com.datastax.oss.driver.api.core.DefaultConsistencyLevel.SERIAL, 0, 1,
						com.datastax.oss.driver.api.core.servererrors.WriteType.CAS)));
		}
		if (method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof Statement<?> statement && this.failing.test(statement)) {
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
