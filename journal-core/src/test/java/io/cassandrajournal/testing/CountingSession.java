package io.cassandrajournal.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;

/** A real session that counts the requests it sends. */
public final class CountingSession {

	private final CqlSession delegate;

	private final AtomicInteger requests = new AtomicInteger();

	public CountingSession(CqlSession delegate) {
		this.delegate = delegate;
	}

	public CqlSession session() {
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				(proxy, method, args) -> {
					if (method.getName().startsWith("execute")) {
						this.requests.incrementAndGet();
					}
					try {
						return method.invoke(this.delegate, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	/** @return requests sent since the last call */
	public int takeCount() {
		return this.requests.getAndSet(0);
	}

}
