package io.cassandrajournal.spring.boot.projection;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

import io.cassandrajournal.UnknownPayloadTypeException;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * The core handler behind the {@code @ProjectionHandler} methods of one projection. It receives the stored
 * JSON, reads it once as the type the {@link EventSerializer} names for the handlers' parameter types
 * ({@link EventSerializer#readTypeFor}: with Jackson, the top type carrying {@code @JsonTypeInfo}, such as a
 * sealed event interface), and calls the method whose parameter type the payload's stored type resolves
 * to. A parameter type no stored type can resolve to fails start-up. An event of another type, or of a
 * type the serializer does not know ({@link UnknownPayloadTypeException}), is skipped and counted
 * ({@code persistence.projection.events.ignored}), not failed; any other read or handler error goes to
 * the projection's recovery strategy.
 */
final class MethodDispatchingHandler implements EventHandler<String> {

	private final List<HandlerMethod> methods;

	private final BeanFactory beanFactory;

	private final EventSerializer serializer;

	private final Class<?> readType;

	private final @Nullable Counter ignored;

	MethodDispatchingHandler(ProjectionDeclaration declaration, BeanFactory beanFactory, EventSerializer serializer,
			@Nullable MeterRegistry meters) {
		this.methods = declaration.methods();
		this.beanFactory = beanFactory;
		this.serializer = serializer;
		this.readType = commonType(this.methods.stream().<Class<?>>map((method) -> readType(method, serializer)).toList());
		this.ignored = (meters != null) ? Counter.builder("persistence.projection.events.ignored")
			.description("Events of a payload type no handler method takes")
			.tag("projection", declaration.name())
			.register(meters) : null;
	}

	@Override
	public CompletionStage<Void> handle(PersistentEvent<String> raw) throws Exception {
		List<?> payloads;
		try {
			payloads = (this.readType == String.class) ? List.of(raw.payload())
					: this.serializer.deserializeEvent(raw.payload(), this.readType);
		}
		catch (UnknownPayloadTypeException ex) {
			return ignore();
		}
		if (payloads.size() == 1) {
			return dispatch(raw, payloads.get(0));
		}
		// An upcaster split the stored event: its parts in order, as the core runner hands them to a handler.
		List<PersistentEvent<Object>> parts = new ArrayList<>(payloads.size());
		for (Object payload : payloads) {
			parts.add(raw.withPayload(payload));
		}
		return EventHandler.inOrder(parts, (part) -> dispatch(raw, part.payload()));
	}

	private CompletionStage<Void> dispatch(PersistentEvent<String> raw, Object payload) throws Exception {
		for (HandlerMethod method : this.methods) {
			if (method.payloadType().isInstance(payload)) {
				return invoke(method, method.envelope() ? raw.withPayload(payload) : payload);
			}
		}
		return ignore();
	}

	private CompletionStage<Void> ignore() {
		if (this.ignored != null) {
			this.ignored.increment();
		}
		return CompletableFuture.completedFuture(null);
	}

	@SuppressWarnings("unchecked")
	private CompletionStage<Void> invoke(HandlerMethod method, Object argument) throws Exception {
		Object bean = this.beanFactory.getBean(method.beanName());
		Method invocable = AopUtils.selectInvocableMethod(method.method(), bean.getClass());
		ReflectionUtils.makeAccessible(invocable);
		try {
			Object result = invocable.invoke(bean, argument);
			return (result instanceof CompletionStage<?> stage) ? (CompletionStage<Void>) stage
					: CompletableFuture.completedFuture(null);
		}
		catch (InvocationTargetException ex) {
			if (ex.getCause() instanceof Exception cause) {
				throw cause;
			}
			throw ex;
		}
	}

	/**
	 * @return the type the serializer reads payloads as for this method
	 * @throws ProjectionDeclarationException if no stored payload can resolve to the method's parameter type
	 */
	private static Class<?> readType(HandlerMethod method, EventSerializer serializer) {
		return serializer.readTypeFor(method.payloadType())
			.orElseThrow(() -> new ProjectionDeclarationException(method.beanName(), method.method().getName(),
					"takes " + method.payloadType().getName() + ", which no stored event resolves to (with the default "
							+ "serializer: neither it nor a supertype carries @JsonTypeInfo, so a payload of any other "
							+ "type would be bound into it); take the event type (a class or sealed interface with "
							+ "@JsonTypeInfo and @JsonSubTypes, or one of its subtypes), PersistentEvent<ThatType>, or "
							+ "String for the stored JSON"));
	}

	/**
	 * @param types the handlers' parameter types, each with a stored type resolving to it
	 * @param serializer the serializer that names the type to read each as
	 * @return the type to read payloads as for them all
	 */
	static Class<?> readType(List<Class<?>> types, EventSerializer serializer) {
		return commonType(types.stream().<Class<?>>map((type) -> serializer.readTypeFor(type).orElseThrow()).toList());
	}

	/** The type to read payloads as: the most specific type every method's read type is assignable to. */
	static Class<?> commonType(List<Class<?>> types) {
		Set<Class<?>> roots = new LinkedHashSet<>(types);
		if (roots.size() == 1) {
			return roots.iterator().next();
		}
		Class<?> first = roots.iterator().next();
		List<Class<?>> candidates = new ArrayList<>(ClassUtils.getAllInterfacesForClassAsSet(first));
		for (Class<?> c = first; c != null && c != Object.class; c = c.getSuperclass()) {
			candidates.add(0, c);
		}
		for (Class<?> candidate : candidates) {
			if (roots.stream().allMatch(candidate::isAssignableFrom)) {
				return candidate;
			}
		}
		return Object.class;
	}

}
