package io.cassandrajournal;

/**
 * Root of every exception the journal, its stores and its queries throw. Unchecked; subclasses say what
 * went wrong: {@link io.cassandrajournal.journal.JournalConcurrencyException},
 * {@link JournalUnavailableException}, {@link JournalSerializationException}, {@link JournalSchemaException},
 * {@link io.cassandrajournal.state.DurableStateConflictException}.
 */
public class JournalException extends RuntimeException {

	private static final long serialVersionUID = 1L;

	public JournalException(String message) {
		super(message);
	}

	public JournalException(String message, Throwable cause) {
		super(message, cause);
	}

}
