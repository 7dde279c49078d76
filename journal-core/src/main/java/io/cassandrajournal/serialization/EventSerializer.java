package io.cassandrajournal.serialization;

import java.util.Optional;

/**
 * Turns event payloads (and snapshots and durable state) into the JSON text stored in the {@code payload}
 * columns, and back. The text must be JSON so that other implementations sharing the keyspace (the
 * reference TypeScript library stores {@code JSON.stringify(event)}) can read it.
 * <p>
 * Implementations must be thread-safe. The default is {@link JacksonEventSerializer}.
 */
public interface EventSerializer {

	/**
	 * @param value the payload
	 * @return its JSON text
	 * @throws io.cassandrajournal.JournalSerializationException if the value cannot be written
	 */
	String serialize(Object value);

	/**
	 * @param <T> the requested type
	 * @param json stored JSON text
	 * @param type the requested type: an event type (for example a sealed interface whose subtypes are
	 * told apart by a {@code kind} property), or {@code Object.class} for a generic tree of maps and lists
	 * @return the value
	 * @throws io.cassandrajournal.UnknownPayloadTypeException if the text names a type {@code type} does not
	 * know
	 * @throws io.cassandrajournal.JournalSerializationException if the text cannot be read as {@code type}
	 */
	<T> T deserialize(String json, Class<T> type);

	/**
	 * The type to read stored payloads as so that each becomes an instance of its stored type, for a reader
	 * that wants instances of {@code wanted}: a payload read as it is handed to the reader only when it is an
	 * instance of {@code wanted}. The default reads every payload as {@code wanted} itself (a serializer that
	 * stores no type information cannot tell more).
	 * @param wanted the type a reader takes
	 * @return the type to read as, or empty when no stored payload can resolve to {@code wanted}
	 */
	default Optional<Class<?>> readTypeFor(Class<?> wanted) {
		return Optional.of(wanted);
	}

}
