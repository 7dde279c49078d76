package io.cassandrajournal.snapshot;

import java.time.Instant;

/**
 * An entity's state as of a sequence number.
 *
 * @param <S> the state type
 * @param persistenceId the entity
 * @param sequenceNr the last event the state includes
 * @param timestamp when the snapshot was taken
 * @param state the state
 */
public record Snapshot<S>(String persistenceId, long sequenceNr, Instant timestamp, S state) {
}
