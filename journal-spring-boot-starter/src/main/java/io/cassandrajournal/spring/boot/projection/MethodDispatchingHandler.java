package io.cassandrajournal.spring.boot.projection;

import java.lang.reflect.InvocationTargetException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.util.ClassUtils;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.projection.ProjectionHandler;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * The core handler behind the {@code @ProjectionHandler} methods of one projection. It receives the stored
 * JSON, reads it once as the handlers' common event type (the top type carrying {@code @JsonTypeInfo}, such
 * as a sealed event interface), and calls the method whose parameter type matches. An event of another
 * type, or of a type id no handler knows, is skipped and counted ({@code persistence.projection.events.ignored}),
 * not failed; any other read or handler error goes to the projection's recovery strategy.
 */
final class MethodDispatchingHandler implements ProjectionHandler<String> {

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
		this.readType = readType(this.methods.stream().map(HandlerMethod::payloadType).toList());
		this.ignored = (meters != null) ? Counter.builder("persistence.projection.events.ignored")
			.description("Events of a payload type no handler method takes")
			.tag("projection", declaration.name())
			.register(meters) : null;
	}

	@Override
	public CompletionStage<Void> handle(PersistentEvent<String> raw) throws Exception {
		Object payload;
		try {
			payload = (this.readType == String.class) ? raw.payload() : this.serializer.deserialize(raw.payload(), this.readType);
		}
		catch (JournalSerializationException ex) {
			if (unknownTypeId(ex)) {
				return ignore();
			}
			throw ex;
		}
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
		java.lang.reflect.Method invocable = org.springframework.aop.support.AopUtils.selectInvocableMethod(method.method(),
				bean.getClass());
		org.springframework.util.ReflectionUtils.makeAccessible(invocable);
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

	private static boolean unknownTypeId(Throwable error) {
		for (Throwable current = error; current != null; current = current.getCause()) {
			if (current.getClass().getSimpleName().equals("InvalidTypeIdException")) {
				return true;
			}
		}
		return false;
	}

	/**
	 * The type to read payloads as: the common root of the handlers' types, preferring the topmost supertype
	 * that carries Jackson's {@code @JsonTypeInfo} (so subtypes are told apart by their type property).
	 */
	static Class<?> readType(List<Class<?>> types) {
		if (types.stream().allMatch((t) -> t == String.class)) {
			return String.class;
		}
		Set<Class<?>> roots = new LinkedHashSet<>();
		for (Class<?> type : types) {
			roots.add(polymorphicRoot(type));
		}
		if (roots.size() == 1) {
			return roots.iterator().next();
		}
		List<Class<?>> candidates = new ArrayList<>(ClassUtils.getAllInterfacesForClassAsSet(roots.iterator().next()));
		for (Class<?> c = roots.iterator().next(); c != null && c != Object.class; c = c.getSuperclass()) {
			candidates.add(0, c);
		}
		for (Class<?> candidate : candidates) {
			if (roots.stream().allMatch(candidate::isAssignableFrom)) {
				return candidate;
			}
		}
		return Object.class;
	}

	private static Class<?> polymorphicRoot(Class<?> type) {
		Class<?> root = type.isAnnotationPresent(JsonTypeInfo.class) ? type : null;
		Set<Class<?>> supertypes = new LinkedHashSet<>(ClassUtils.getAllInterfacesForClassAsSet(type));
		for (Class<?> c = type.getSuperclass(); c != null && c != Object.class; c = c.getSuperclass()) {
			supertypes.add(c);
		}
		for (Class<?> candidate : supertypes) {
			if (candidate.isAnnotationPresent(JsonTypeInfo.class) && (root == null || candidate.isAssignableFrom(root))) {
				root = candidate;
			}
		}
		return (root != null) ? root : type;
	}

}
