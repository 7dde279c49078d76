package io.cassandrajournal.entity;

/**
 * An entity's current state and the sequence number it reflects, to pass as expected sequence number to
 * the next append.
 *
 * @param <S> the state type
 * @param persistenceId the entity
 * @param sequenceNr the last event folded into the state, or the head when the numbers above that event are
 * a crash gap (claimed, never written): never above what the state reflects
 * @param state the state
 */
public record EntityState<S>(String persistenceId, long sequenceNr, S state) {

	/** @return whether the entity has no events */
	public boolean isNew() {
		return this.sequenceNr == 0;
	}

}
