package io.cassandrajournal.state;

import io.cassandrajournal.JournalException;

/**
 * A durable-state write expected another revision than the stored one; nothing was written.
 */
public class DurableStateConflictException extends JournalException {

	private static final long serialVersionUID = 1L;

	private final String persistenceId;

	private final long expectedRevision;

	private final long actualRevision;

	public DurableStateConflictException(String persistenceId, long expectedRevision, long actualRevision) {
		super("Durable state '" + persistenceId + "' is at revision " + actualRevision + ", not " + expectedRevision
				+ " as the write expected; reload and retry");
		this.persistenceId = persistenceId;
		this.expectedRevision = expectedRevision;
		this.actualRevision = actualRevision;
	}

	/** @return the key */
	public String persistenceId() {
		return this.persistenceId;
	}

	/** @return the revision the write expected to find (0 for none) */
	public long expectedRevision() {
		return this.expectedRevision;
	}

	/** @return the revision found (0 for none) */
	public long actualRevision() {
		return this.actualRevision;
	}

}
