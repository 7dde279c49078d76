package io.cassandrajournal.projection;

import java.time.Instant;

import io.cassandrajournal.journal.PersistentEvent;

/**
 * An event a projection skipped, so that nothing disappears without a trace.
 *
 * @param projection the projection that skipped it
 * @param event the event, payload as stored JSON text
 * @param error the last error's description ({@code parked behind ...} for events parked behind an earlier
 * dead letter of the same persistenceId)
 * @param failedAt when it was skipped
 */
public record DeadLetter(ProjectionId projection, PersistentEvent<String> event, String error, Instant failedAt) {
}
