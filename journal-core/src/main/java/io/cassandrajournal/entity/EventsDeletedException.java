package io.cassandrajournal.entity;

import io.cassandrajournal.JournalException;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;

/**
 * An entity load would have folded a state without events that a cleanup deleted ({@code deleteTo},
 * {@code JournalCleanup}, snapshot retention) and no readable snapshot covers them (docs/reliability.md, finding
 * 19): the load fails rather than return a partial state. Load such entities from a snapshot taken at or after the
 * deleted range (keep snapshots readable as the state type), or do not delete events of entities that replay from
 * sequence number 1.
 */
public class EventsDeletedException extends JournalException {

	private static final long serialVersionUID = 1L;

	private final String persistenceId;

	private final long deletedTo;

	/**
	 * @param persistenceId the entity
	 * @param deleted the deleted numbers the load would have folded over
	 * @param startedAt the sequence number of the state the load started from (a snapshot's, or 0)
	 */
	public EventsDeletedException(String persistenceId, SequenceRange deleted, long startedAt) {
		super("Entity '" + persistenceId + "' cannot be loaded: its events " + deleted
				+ " were deleted (deleteTo or a retention cleanup) and " + ((startedAt == 0)
						? "no readable snapshot covers them (the load started from the empty state)"
						: "the snapshot it started from (at " + startedAt + ") does not cover them")
				+ "; a state folded without them would be wrong. Load it from a snapshot at or after " + deleted.to()
				+ " (an entity with snapshotEvery > 0 whose snapshots read as its state type)");
		this.persistenceId = persistenceId;
		this.deletedTo = deleted.to();
	}

	/** @return the entity */
	public String persistenceId() {
		return this.persistenceId;
	}

	/** @return the last deleted sequence number: a snapshot at or after it covers the range */
	public long deletedTo() {
		return this.deletedTo;
	}

}
