package io.cassandrajournal;

/**
 * A payload could not be turned into JSON, or stored JSON could not be read as the requested type.
 * Nothing was written when this is thrown by an append.
 */
public class JournalSerializationException extends JournalException {

	private static final long serialVersionUID = 1L;

	public JournalSerializationException(String message, Throwable cause) {
		super(message, cause);
	}

}
