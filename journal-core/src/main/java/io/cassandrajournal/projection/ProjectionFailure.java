package io.cassandrajournal.projection;

import io.cassandrajournal.journal.PersistentEvent;

/**
 * One failed attempt to handle an event, as given to the {@code onFailure} hook.
 *
 * @param projection the projection
 * @param event the event, payload as stored JSON text
 * @param error what the handler threw (or the payload's deserialization error)
 * @param attempt 1 for the first attempt, 2 for the first retry, ...
 * @param action what the projection does next
 */
public record ProjectionFailure(ProjectionId projection, PersistentEvent<String> event, Throwable error, int attempt,
		FailureAction action) {
}
