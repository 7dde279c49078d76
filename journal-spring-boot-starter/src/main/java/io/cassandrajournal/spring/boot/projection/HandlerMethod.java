package io.cassandrajournal.spring.boot.projection;

import java.lang.reflect.Method;

/**
 * One {@link ProjectionHandler} method.
 *
 * @param beanName the bean
 * @param method the method
 * @param payloadType the payload type it takes
 * @param envelope whether it takes the {@code PersistentEvent} envelope
 */
record HandlerMethod(String beanName, Method method, Class<?> payloadType, boolean envelope) {

	String describe() {
		return this.beanName + "." + this.method.getName();
	}

}
