package io.cassandrajournal.spring.boot.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.cassandrajournal.JournalSchemaException;

/**
 * Turns a missing keyspace or table at start-up into a failure report with the fix.
 */
final class JournalSchemaFailureAnalyzer extends AbstractFailureAnalyzer<JournalSchemaException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, JournalSchemaException cause) {
		return new FailureAnalysis("The Cassandra journal's schema is not usable: " + cause.getMessage(),
				"Create the keyspace (the journal never creates it), set journal.cassandra.keyspace to an existing "
						+ "one, or enable journal.cassandra.auto-create-tables so missing tables are created.",
				cause);
	}

}
