package io.cassandrajournal.internal;

import java.util.ArrayList;
import java.util.List;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * Deserializes an event read with its payload as stored JSON text, naming the event when that fails. Every
 * read path of events goes through here (or {@link EventSerializer#deserializeEvent} directly), so upcasting
 * happens in one place: an event an upcaster split becomes several events with the stored event's
 * sequence number.
 */
public final class RawEvents {

	private RawEvents() {
	}

	/**
	 * @param type the payload type; {@code String.class} keeps the stored JSON text as it is
	 * @return the event, or the parts an upcaster split it into, in order
	 */
	@SuppressWarnings("unchecked")
	public static <E> List<PersistentEvent<E>> deserialize(PersistentEvent<String> raw, EventSerializer serializer,
			Class<E> type) {
		if (type == String.class) {
			return List.of((PersistentEvent<E>) raw);
		}
		List<E> payloads = payloads(raw.persistenceId(), raw.sequenceNr(), raw.payload(), serializer, type);
		if (payloads.size() == 1) {
			return List.of(raw.withPayload(payloads.get(0)));
		}
		List<PersistentEvent<E>> events = new ArrayList<>(payloads.size());
		for (E payload : payloads) {
			events.add(raw.withPayload(payload));
		}
		return events;
	}

	/**
	 * @param persistenceId the event's persistenceId, for the message
	 * @param sequenceNr the event's sequence number, for the message
	 * @param payload the stored JSON text
	 * @param serializer the serializer
	 * @param type the payload type; {@code String.class} keeps the stored JSON text as it is
	 * @return the payload, or the parts an upcaster split it into, in order
	 */
	@SuppressWarnings("unchecked")
	public static <E> List<E> payloads(String persistenceId, long sequenceNr, String payload, EventSerializer serializer,
			Class<E> type) {
		if (type == String.class) {
			return List.of((E) payload);
		}
		try {
			return serializer.deserializeEvent(payload, type);
		}
		catch (JournalSerializationException ex) {
			throw new JournalSerializationException("Event " + persistenceId + "#" + sequenceNr + ": " + ex.getMessage(),
					ex);
		}
	}

}
