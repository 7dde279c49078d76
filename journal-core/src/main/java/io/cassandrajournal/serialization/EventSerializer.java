package io.cassandrajournal.serialization;

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
	 * @throws io.cassandrajournal.JournalSerializationException if the text cannot be read as {@code type}
	 */
	<T> T deserialize(String json, Class<T> type);

}
