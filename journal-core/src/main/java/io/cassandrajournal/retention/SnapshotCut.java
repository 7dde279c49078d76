package io.cassandrajournal.retention;

/**
 * The cut of one entity under "keep K snapshots, delete the events up to the oldest kept one": planned by
 * {@link JournalCleanup#planSnapshotCut} (a dry run) or done by {@link JournalCleanup#deleteBeforeSnapshot}.
 *
 * @param persistenceId the entity
 * @param cutTo the sequence number of the oldest kept snapshot: events up to it are (to be) deleted; 0 when the
 * entity has no snapshot (nothing is deleted)
 * @param alreadyDeletedTo how far earlier deletions went (the journal's deletion mark)
 * @param snapshotsDeleted snapshots older than the oldest kept one
 * @param snapshotsKept snapshots kept (at most K)
 */
public record SnapshotCut(String persistenceId, long cutTo, long alreadyDeletedTo, int snapshotsDeleted,
		int snapshotsKept) {

	/**
	 * @return sequence numbers (to be) deleted: {@code cutTo - alreadyDeletedTo}, or 0; a crash gap in the range
	 * counts although it holds no event
	 */
	public long events() {
		return Math.max(0, this.cutTo - this.alreadyDeletedTo);
	}

	/** @return whether the cut deletes anything */
	public boolean deletesSomething() {
		return events() > 0 || this.snapshotsDeleted > 0;
	}

}
