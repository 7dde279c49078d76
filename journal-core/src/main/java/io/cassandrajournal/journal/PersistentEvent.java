package io.cassandrajournal.journal;

import java.time.Instant;
import java.util.Set;

/**
 * An event as stored: its identity in the journal, its time stamp, its tags and its payload.
 *
 * @param <E> the payload type
 * @param persistenceId the entity's id
 * @param sequenceNr the event's position in that entity's stream, from 1, without holes unless a crash
 * left a gap (see {@link Journal#checkConsistency(String)})
 * @param timestamp when it was appended, in milliseconds (the journal's clock)
 * @param tags its tags
 * @param payload the deserialized event
 */
public record PersistentEvent<E>(String persistenceId, long sequenceNr, Instant timestamp, Set<String> tags,
		E payload) {

	public PersistentEvent {
		tags = Set.copyOf(tags);
	}

	/**
	 * @param <T> the new payload type
	 * @param newPayload the payload to carry instead
	 * @return the same envelope with another payload
	 */
	public <T> PersistentEvent<T> withPayload(T newPayload) {
		return new PersistentEvent<>(this.persistenceId, this.sequenceNr, this.timestamp, this.tags, newPayload);
	}

}
