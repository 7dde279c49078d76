package io.cassandrajournal;

/**
 * The keyspace, a table or a column the journal needs is missing or has the wrong type. The message names
 * what is missing and how to fix it (create the keyspace, or turn on {@code autoCreateTables}).
 */
public class JournalSchemaException extends JournalException {

	private static final long serialVersionUID = 1L;

	public JournalSchemaException(String message) {
		super(message);
	}

}
