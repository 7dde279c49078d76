package io.cassandrajournal;

/**
 * Stored JSON names a type (for example its {@code kind} property) that the requested type does not know:
 * an event of a kind this reader was not built for, not a broken payload. A reader may skip it.
 */
public class UnknownPayloadTypeException extends JournalSerializationException {

	private static final long serialVersionUID = 1L;

	public UnknownPayloadTypeException(String message, Throwable cause) {
		super(message, cause);
	}

}
