package io.cassandrajournal.serialization;

import java.util.LinkedHashSet;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

import com.fasterxml.jackson.annotation.JsonTypeInfo;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.exc.InvalidTypeIdException;
import tools.jackson.databind.json.JsonMapper;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.UnknownPayloadTypeException;

/**
 * The default {@link EventSerializer}, on Jackson 3. Event hierarchies map onto the reference format with
 * Jackson's own annotations:
 *
 * <pre>{@code
 * @JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "kind")
 * @JsonSubTypes({ @JsonSubTypes.Type(value = Deposited.class, name = "deposited"),
 *                 @JsonSubTypes.Type(value = Withdrawn.class, name = "withdrawn") })
 * sealed interface AccountEvent permits Deposited, Withdrawn { }
 * record Deposited(long amount) implements AccountEvent { }   // {"kind":"deposited","amount":5}
 * }</pre>
 *
 * Unknown properties are ignored on read, so events written by a newer writer with extra fields still load.
 */
public final class JacksonEventSerializer implements EventSerializer {

	private final JsonMapper mapper;

	/** Uses a mapper that ignores unknown properties. */
	public JacksonEventSerializer() {
		this(JsonMapper.builder().disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES).build());
	}

	/** @param mapper the mapper to use, for example the application's own */
	public JacksonEventSerializer(JsonMapper mapper) {
		this.mapper = Objects.requireNonNull(mapper, "mapper");
	}

	@Override
	public String serialize(Object value) {
		Objects.requireNonNull(value, "payload");
		try {
			return this.mapper.writeValueAsString(value);
		}
		catch (JacksonException ex) {
			throw new JournalSerializationException("Cannot write " + value.getClass().getName() + " as JSON: "
					+ ex.getOriginalMessage(), ex);
		}
	}

	@Override
	public <T> T deserialize(String json, Class<T> type) {
		try {
			return this.mapper.readValue(json, type);
		}
		catch (InvalidTypeIdException ex) {
			throw new UnknownPayloadTypeException("Cannot read stored payload as " + type.getName() + ": "
					+ ex.getOriginalMessage() + " (payload: " + abbreviate(json) + ")", ex);
		}
		catch (JacksonException ex) {
			throw new JournalSerializationException("Cannot read stored payload as " + type.getName() + ": "
					+ ex.getOriginalMessage() + " (payload: " + abbreviate(json) + ")", ex);
		}
	}

	/**
	 * The stored type of a payload is the one its type property names ({@code @JsonTypeInfo}): payloads are read
	 * as the topmost supertype of {@code wanted} that carries {@code @JsonTypeInfo}, so a payload reaches a
	 * reader of {@code wanted} only when its type id resolves to {@code wanted} or a subtype. {@code String}
	 * (the stored text), {@code Object} (a tree of maps and lists) and {@code JsonNode} take every payload.
	 * A type without {@code @JsonTypeInfo} on it or a supertype has no stored type resolving to it.
	 */
	@Override
	public Optional<Class<?>> readTypeFor(Class<?> wanted) {
		if (wanted == String.class || wanted == Object.class || JsonNode.class.isAssignableFrom(wanted)) {
			return Optional.of(wanted);
		}
		Class<?> root = wanted.isAnnotationPresent(JsonTypeInfo.class) ? wanted : null;
		Set<Class<?>> supertypes = new LinkedHashSet<>();
		collectSupertypes(wanted, supertypes);
		for (Class<?> candidate : supertypes) {
			if (candidate.isAnnotationPresent(JsonTypeInfo.class) && (root == null || candidate.isAssignableFrom(root))) {
				root = candidate;
			}
		}
		return Optional.ofNullable(root);
	}

	private static void collectSupertypes(Class<?> type, Set<Class<?>> into) {
		for (Class<?> each : type.getInterfaces()) {
			if (into.add(each)) {
				collectSupertypes(each, into);
			}
		}
		Class<?> superclass = type.getSuperclass();
		if (superclass != null && superclass != Object.class && into.add(superclass)) {
			collectSupertypes(superclass, into);
		}
	}

	private static String abbreviate(String json) {
		return (json.length() > 200) ? json.substring(0, 200) + "..." : json;
	}

}
