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

	public static <E> PersistentEvent<E> deserialize(PersistentEvent<String> raw, EventSerializer serializer,
			Class<E> type) {
		try {
			return raw.withPayload(serializer.deserialize(raw.payload(), type));
		}
		catch (JournalSerializationException ex) {
			throw new JournalSerializationException(
					"Event " + raw.persistenceId() + "#" + raw.sequenceNr() + ": " + ex.getMessage(), ex);
		}
	}

}
