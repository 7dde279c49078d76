package io.cassandrajournal.spring.boot.projection;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.RecoveryStrategy;
import io.cassandrajournal.query.TagFilter;

/**
 * Finds {@link ProjectionHandler} methods on the beans of a context, checks each declaration, and groups
 * them into projections. Every problem is reported with the bean, the method and the fix.
 */
final class ProjectionHandlerMethods {

	private ProjectionHandlerMethods() {
	}

	static List<ProjectionDeclaration> discover(ConfigurableListableBeanFactory beanFactory, ProjectionSettings defaults) {
		Map<String, List<Found>> byName = new LinkedHashMap<>();
		for (String beanName : beanFactory.getBeanDefinitionNames()) {
			Class<?> type = beanFactory.getType(beanName, false);
			if (type == null) {
				continue;
			}
			Class<?> userType = ClassUtils.getUserClass(type);
			Map<Method, ProjectionHandler> methods = MethodIntrospector.selectMethods(userType,
					(MethodIntrospector.MetadataLookup<ProjectionHandler>) (method) -> AnnotatedElementUtils
						.findMergedAnnotation(method, ProjectionHandler.class));
			methods.forEach((method, annotation) -> byName.computeIfAbsent(annotation.name(), (n) -> new ArrayList<>())
				.add(new Found(annotation, handlerMethod(beanName, method, annotation))));
		}
		List<ProjectionDeclaration> declarations = new ArrayList<>();
		byName.forEach((name, found) -> declarations.add(declaration(name, found, defaults)));
		return declarations;
	}

	private static HandlerMethod handlerMethod(String beanName, Method method, ProjectionHandler annotation) {
		String where = method.getName();
		if (annotation.name().isBlank()) {
			throw new ProjectionDeclarationException(beanName, where, "name is blank; give the projection a name");
		}
		if (method.getParameterCount() != 1) {
			throw new ProjectionDeclarationException(beanName, where, "takes " + method.getParameterCount()
					+ " parameters; declare exactly one: the payload type or PersistentEvent<PayloadType>");
		}
		Class<?> returnType = method.getReturnType();
		if (returnType != void.class && !CompletionStage.class.isAssignableFrom(returnType)) {
			throw new ProjectionDeclarationException(beanName, where, "returns " + returnType.getName()
					+ "; return void or a CompletionStage");
		}
		ResolvableType parameter = ResolvableType.forMethodParameter(method, 0);
		Class<?> raw = parameter.toClass();
		if (PersistentEvent.class.equals(raw)) {
			Class<?> payload = parameter.getGeneric(0).resolve(Object.class);
			return new HandlerMethod(beanName, method, checkPayloadType(beanName, where, payload), true);
		}
		return new HandlerMethod(beanName, method, checkPayloadType(beanName, where, raw), false);
	}

	private static Class<?> checkPayloadType(String beanName, String where, Class<?> type) {
		if (type.isPrimitive() || type.isArray() || Number.class.isAssignableFrom(type) || type == Boolean.class) {
			throw new ProjectionDeclarationException(beanName, where, "takes " + type.getName()
					+ ", which is not an event type; take the event's class (for example a record of your sealed event "
					+ "interface) or PersistentEvent<ThatClass>");
		}
		return type;
	}

	private static ProjectionDeclaration declaration(String name, List<Found> found, ProjectionSettings defaults) {
		Found first = found.get(0);
		Source source = source(first);
		List<HandlerMethod> methods = new ArrayList<>();
		Map<Class<?>, HandlerMethod> byType = new LinkedHashMap<>();
		for (Found each : found) {
			Source other = source(each);
			if (!other.equals(source)) {
				throw new ProjectionDeclarationException(each.method.beanName(), each.method.method().getName(),
						"projection '" + name + "' is declared with " + other.describe() + " here but with "
								+ source.describe() + " on " + first.method.describe()
								+ "; methods sharing a projection name must read the same source (or use another name)");
			}
			HandlerMethod clash = byType.put(each.method.payloadType(), each.method);
			if (clash != null) {
				throw new ProjectionDeclarationException(each.method.beanName(), each.method.method().getName(),
						"projection '" + name + "' already has a handler for " + each.method.payloadType().getSimpleName()
								+ " (" + clash.describe() + "); keep one handler per payload type");
			}
			methods.add(each.method);
		}
		ProjectionSettings settings = segments(name, found, source, settings(name, found, defaults));
		return new ProjectionDeclaration(name, source.filter, source.persistenceId, methods, settings,
				found.stream().allMatch((f) -> f.annotation.autoStartup()),
				found.stream().anyMatch((f) -> f.annotation.rebuildOnStart()));
	}

	private static Source source(Found found) {
		ProjectionHandler a = found.annotation;
		String bean = found.method.beanName();
		String method = found.method.method().getName();
		boolean hasTag = !a.tag().isBlank();
		boolean hasFilter = a.any().length > 0 || a.all().length > 0 || a.not().length > 0;
		boolean hasPid = !a.persistenceId().isBlank();
		if (hasTag && hasFilter) {
			throw new ProjectionDeclarationException(bean, method, "declares both tag and any/all/not; use tag = \""
					+ a.tag() + "\" alone, or the any/all/not form (they are different cursors)");
		}
		if (hasPid && (hasTag || hasFilter)) {
			throw new ProjectionDeclarationException(bean, method,
					"declares both a persistenceId and tags; a projection reads one persistenceId or a tag filter");
		}
		if (!hasTag && !hasFilter && !hasPid) {
			throw new ProjectionDeclarationException(bean, method,
					"declares no source; set tag, any/all (optionally with not), or persistenceId");
		}
		try {
			if (hasPid) {
				return new Source(null, a.persistenceId());
			}
			TagFilter filter = hasTag ? TagFilter.tag(a.tag()) : TagFilter.of(List.of(a.any()), List.of(a.all()),
					List.of(a.not()));
			if (!filter.hasPositiveTag()) {
				throw new ProjectionDeclarationException(bean, method, "filter '" + filter.canonical()
						+ "' names no tag an event must carry; add any or all tags");
			}
			return new Source(filter, null);
		}
		catch (IllegalArgumentException ex) {
			throw new ProjectionDeclarationException(bean, method, ex.getMessage());
		}
	}

	/**
	 * Settings of a projection: each attribute may be set on any of its methods, but not to two different
	 * values.
	 */
	private static ProjectionSettings settings(String name, List<Found> found, ProjectionSettings defaults) {
		Map<String, String> chosen = new LinkedHashMap<>();
		Map<String, Found> chosenBy = new LinkedHashMap<>();
		for (Found each : found) {
			ProjectionHandler a = each.annotation;
			choose(name, chosen, chosenBy, each, "recovery", a.recovery());
			choose(name, chosen, chosenBy, each, "maxRetries", (a.maxRetries() >= 0) ? String.valueOf(a.maxRetries()) : "");
			choose(name, chosen, chosenBy, each, "retryBackoff", a.retryBackoff());
			choose(name, chosen, chosenBy, each, "maxRetryBackoff", a.maxRetryBackoff());
			choose(name, chosen, chosenBy, each, "pollInterval", a.pollInterval());
			choose(name, chosen, chosenBy, each, "concurrency", (a.concurrency() != 0) ? String.valueOf(a.concurrency()) : "");
		}
		ProjectionSettings settings = defaults;
		String attribute = "";
		try {
			attribute = "recovery";
			if (chosen.containsKey(attribute)) {
				settings = settings.withRecoveryStrategy(recovery(chosen.get(attribute)));
			}
			attribute = "maxRetries";
			if (chosen.containsKey(attribute)) {
				settings = settings.withMaxRetries(Integer.parseInt(chosen.get(attribute)));
			}
			attribute = "retryBackoff";
			Duration backoff = duration(chosen.getOrDefault(attribute, ""), settings.retryBackoff());
			attribute = "maxRetryBackoff";
			Duration maxBackoff = duration(chosen.getOrDefault(attribute, ""), settings.maxRetryBackoff());
			settings = settings.withRetryBackoff(backoff, maxBackoff);
			attribute = "pollInterval";
			settings = settings.withPollInterval(duration(chosen.getOrDefault(attribute, ""), settings.pollInterval()));
			attribute = "concurrency";
			if (chosen.containsKey(attribute)) {
				settings = settings.withConcurrency(Integer.parseInt(chosen.get(attribute)));
			}
		}
		catch (IllegalArgumentException ex) {
			Found where = chosenBy.getOrDefault(attribute, found.get(0));
			throw new ProjectionDeclarationException(where.method.beanName(), where.method.method().getName(),
					attribute + " = \"" + chosen.getOrDefault(attribute, "") + "\" is invalid (" + ex.getMessage()
							+ "); recovery is retry-and-fail, retry-and-skip, fail or skip; durations look like 500ms, 2s, 1m");
		}
		return settings;
	}

	/**
	 * The projection's segments: its own ({@code segments} on any of its methods, once) or the default; always one
	 * for a projection of one persistenceId.
	 */
	private static ProjectionSettings segments(String name, List<Found> found, Source source, ProjectionSettings settings) {
		Map<String, String> chosen = new LinkedHashMap<>();
		Map<String, Found> chosenBy = new LinkedHashMap<>();
		for (Found each : found) {
			int segments = each.annotation.segments();
			choose(name, chosen, chosenBy, each, "segments", (segments != 0) ? String.valueOf(segments) : "");
		}
		if (!chosen.containsKey("segments")) {
			return (source.persistenceId != null) ? settings.withSegments(1) : settings;
		}
		Found where = chosenBy.get("segments");
		int segments = Integer.parseInt(chosen.get("segments"));
		if (source.persistenceId != null && segments != 1) {
			throw new ProjectionDeclarationException(where.method.beanName(), where.method.method().getName(),
					"segments = " + segments + " on projection '" + name + "', which reads one persistenceId ('"
							+ source.persistenceId + "') and so has one segment; remove segments or read a tag");
		}
		try {
			return settings.withSegments(segments);
		}
		catch (IllegalArgumentException ex) {
			throw new ProjectionDeclarationException(where.method.beanName(), where.method.method().getName(),
					"segments = " + segments + " is invalid: a projection's segments are a power of two from 1 to 1024 "
							+ "(so that more segments split today's ranges exactly), or 0 for "
							+ "journal.cassandra.projections.segments");
		}
	}

	private static void choose(String name, Map<String, String> chosen, Map<String, Found> chosenBy, Found each,
			String attribute, String value) {
		if (value.isBlank()) {
			return;
		}
		String previous = chosen.putIfAbsent(attribute, value.trim());
		if (previous != null && !previous.equals(value.trim())) {
			throw new ProjectionDeclarationException(each.method.beanName(), each.method.method().getName(),
					"sets " + attribute + " = \"" + value + "\" but " + chosenBy.get(attribute).method.describe()
							+ " sets \"" + previous + "\" for the same projection '" + name + "'; set it once");
		}
		chosenBy.putIfAbsent(attribute, each);
	}

	private static RecoveryStrategy recovery(String text) {
		try {
			return RecoveryStrategy.valueOf(text.toUpperCase(Locale.ROOT).replace('-', '_'));
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("not a recovery strategy");
		}
	}

	private static Duration duration(String text, Duration fallback) {
		return text.isBlank() ? fallback : DurationStyle.detectAndParse(text.trim());
	}

	private record Found(ProjectionHandler annotation, HandlerMethod method) {
	}

	private record Source(@Nullable TagFilter filter, @Nullable String persistenceId) {

		String describe() {
			return (this.filter != null) ? "tag filter '" + this.filter.canonical() + "'"
					: "persistenceId '" + this.persistenceId + "'";
		}

	}

}
