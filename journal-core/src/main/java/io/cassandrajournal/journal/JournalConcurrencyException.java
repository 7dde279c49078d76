package io.cassandrajournal.journal;

import io.cassandrajournal.JournalException;

/**
 * An append lost the race for its sequence range: the persistenceId's head was not the expected sequence
 * number. Nothing of the losing append was written. Reload the entity from
 * {@link #actualSequenceNr()} (the winner's head) and decide again.
 */
public class JournalConcurrencyException extends JournalException {

	private static final long serialVersionUID = 1L;

	private final String persistenceId;

	private final long expectedSequenceNr;

	private final long actualSequenceNr;

	public JournalConcurrencyException(String persistenceId, long expectedSequenceNr, long actualSequenceNr) {
		super("Concurrent append to '" + persistenceId + "': expected sequence number " + expectedSequenceNr
				+ " but the head is " + actualSequenceNr + "; reload and retry");
		this.persistenceId = persistenceId;
		this.expectedSequenceNr = expectedSequenceNr;
		this.actualSequenceNr = actualSequenceNr;
	}

	/** @return the entity whose append lost */
	public String persistenceId() {
		return this.persistenceId;
	}

	/** @return the head the losing append expected */
	public long expectedSequenceNr() {
		return this.expectedSequenceNr;
	}

	/** @return the head as the winner left it */
	public long actualSequenceNr() {
		return this.actualSequenceNr;
	}

}
