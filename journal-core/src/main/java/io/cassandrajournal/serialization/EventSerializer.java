package io.cassandrajournal.serialization;

import java.util.List;
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
	 * Reads one stored event. A serializer with upcasters (see {@link JacksonEventSerializer}) brings it up to
	 * its current version first, which may split it: every read path of the journal (replay, entity loads, tag
	 * queries and feeds, projections and their dead-letter redelivery) reads events through this method and
	 * hands each part on with the stored event's sequence number and offset. The default reads one value with
	 * {@link #deserialize}.
	 * @param <T> the requested type
	 * @param json stored JSON text
	 * @param type the requested type, as for {@link #deserialize}
	 * @return the event, or the parts an upcaster split it into, in order (empty when an upcaster dropped it)
	 * @throws io.cassandrajournal.UnknownPayloadTypeException if the text names a type {@code type} does not
	 * know
	 * @throws io.cassandrajournal.JournalSerializationException if the text cannot be read as {@code type}, an
	 * upcaster failed (the message names it), or the payload is older than its class and no upcaster reads its
	 * version
	 */
	default <T> List<T> deserializeEvent(String json, Class<T> type) {
		return List.of(deserialize(json, type));
	}

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
