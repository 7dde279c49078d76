package io.cassandrajournal.launcher;

/**
 * Thrown when a node cannot be started, stopped or reached. The message says why and, when the node's
 * process got as far as writing a log, ends with the tail of that log.
 */
public class CassandraLaunchException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public CassandraLaunchException(String message) {
		super(message);
	}

	public CassandraLaunchException(String message, Throwable cause) {
		super(message, cause);
	}

}
