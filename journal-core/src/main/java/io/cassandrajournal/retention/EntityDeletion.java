package io.cassandrajournal.retention;

/**
 * What {@link JournalCleanup#deleteEntity} did.
 *
 * @param persistenceId the entity
 * @param eventsDeletedTo the head read at the start: every event up to it is deleted (0: the entity had none)
 * @param removed whether the entity is gone (head row, id row, snapshots, durable state and deletion marks
 * deleted too); {@code false} when another writer appended while the events were deleted: its events above
 * {@link #eventsDeletedTo} stay, as do the head, the id row and the snapshots (a later call deletes them)
 * @param headAfter the head found when {@link #removed} is {@code false}, else 0
 */
public record EntityDeletion(String persistenceId, long eventsDeletedTo, boolean removed, long headAfter) {
}
