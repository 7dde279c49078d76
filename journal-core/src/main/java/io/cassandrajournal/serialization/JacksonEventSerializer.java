package io.cassandrajournal.serialization;

import java.util.Objects;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.DeserializationFeature;
import tools.jackson.databind.json.JsonMapper;

import io.cassandrajournal.JournalSerializationException;

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
		catch (JacksonException ex) {
			throw new JournalSerializationException("Cannot read stored payload as " + type.getName() + ": "
					+ ex.getOriginalMessage() + " (payload: " + abbreviate(json) + ")", ex);
		}
	}

	private static String abbreviate(String json) {
		return (json.length() > 200) ? json.substring(0, 200) + "..." : json;
	}

}
