package io.cassandrajournal.query;

import io.cassandrajournal.journal.PersistentEvent;

/**
 * An event from a tag feed with its offset (resume after it to continue).
 *
 * @param <E> the payload type
 * @param offset the event's position in the feed
 * @param event the event
 */
public record TaggedEvent<E>(TagOffset offset, PersistentEvent<E> event) {
}
