package io.cassandrajournal.internal;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * Deserializes an event read with its payload as stored JSON text, naming the event when that fails.
 */
public final class RawEvents {

	private RawEvents() {
	}

	/**
	 * @param type the payload type; {@code String.class} keeps the stored JSON text as it is
	 */
	@SuppressWarnings("unchecked")
	public static <E> PersistentEvent<E> deserialize(PersistentEvent<String> raw, EventSerializer serializer,
			Class<E> type) {
		if (type == String.class) {
			return (PersistentEvent<E>) raw;
		}
		return raw.withPayload(payload(raw.persistenceId(), raw.sequenceNr(), raw.payload(), serializer, type));
	}

	/**
	 * @param persistenceId the event's persistenceId, for the message
	 * @param sequenceNr the event's sequence number, for the message
	 * @param payload the stored JSON text
	 * @param serializer the serializer
	 * @param type the payload type; {@code String.class} keeps the stored JSON text as it is
	 * @return the payload
	 */
	@SuppressWarnings("unchecked")
	public static <E> E payload(String persistenceId, long sequenceNr, String payload, EventSerializer serializer,
			Class<E> type) {
		if (type == String.class) {
			return (E) payload;
		}
		try {
			return serializer.deserialize(payload, type);
		}
		catch (JournalSerializationException ex) {
			throw new JournalSerializationException("Event " + persistenceId + "#" + sequenceNr + ": " + ex.getMessage(),
					ex);
		}
	}

}
