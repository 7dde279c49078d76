package io.cassandrajournal;

/**
 * Cassandra could not be reached or did not answer in time. The message names the operation and the
 * persistenceId; the cause is the driver's exception. Whether the write happened is unknown unless the
 * message says otherwise: retrying an append with the same expected sequence number is safe.
 */
public class JournalUnavailableException extends JournalException {

	private static final long serialVersionUID = 1L;

	public JournalUnavailableException(String message, Throwable cause) {
		super(message, cause);
	}

}
