package io.cassandrajournal.state;

import java.time.Instant;

/**
 * A stored value with its revision.
 *
 * @param <S> the value type
 * @param persistenceId the key
 * @param revision the revision, from 1, increased by one on every update
 * @param updatedAt when it was last written
 * @param value the value
 */
public record DurableState<S>(String persistenceId, long revision, Instant updatedAt, S value) {
}
