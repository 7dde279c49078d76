package io.cassandrajournal.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Statement;

/**
 * A real session that records how many of the asynchronous requests matching a predicate were in flight at
 * once (sent, not yet answered): to show a caller's back-pressure.
 */
public final class InFlightSession {

	private final CqlSession delegate;

	private final Predicate<Statement<?>> counted;

	private final AtomicInteger inFlight = new AtomicInteger();

	private final AtomicInteger maxInFlight = new AtomicInteger();

	private final AtomicInteger sent = new AtomicInteger();

	public InFlightSession(CqlSession delegate, Predicate<Statement<?>> counted) {
		this.delegate = delegate;
		this.counted = counted;
	}

	public CqlSession session() {
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				(proxy, method, args) -> {
					boolean track = method.getName().equals("executeAsync") && args != null && args.length == 1
							&& args[0] instanceof Statement<?> statement && this.counted.test(statement);
					if (track) {
						this.sent.incrementAndGet();
						this.maxInFlight.accumulateAndGet(this.inFlight.incrementAndGet(), Math::max);
					}
					Object result;
					try {
						result = method.invoke(this.delegate, args);
					}
					catch (InvocationTargetException ex) {
						if (track) {
							this.inFlight.decrementAndGet();
						}
						throw ex.getCause();
					}
					if (track) {
						// The caller gets the stage that completes after the count went down, so a caller that
						// sends its next request on completion is not counted twice.
						return ((CompletionStage<?>) result).whenComplete((value, error) -> this.inFlight.decrementAndGet());
					}
					return result;
				});
	}

	/** @return the most matching requests that were in flight at once */
	public int maxInFlight() {
		return this.maxInFlight.get();
	}

	/** @return matching requests sent */
	public int sent() {
		return this.sent.get();
	}

}
