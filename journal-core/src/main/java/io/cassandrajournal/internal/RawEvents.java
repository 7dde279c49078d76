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
		try {
			return raw.withPayload(serializer.deserialize(raw.payload(), type));
		}
		catch (JournalSerializationException ex) {
			throw new JournalSerializationException(
					"Event " + raw.persistenceId() + "#" + raw.sequenceNr() + ": " + ex.getMessage(), ex);
		}
	}

}
