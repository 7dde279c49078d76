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
				"A missing keyspace: create it (the journal never creates keyspaces), for one development node with "
						+ "CREATE KEYSPACE <name> WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}, "
						+ "in production with NetworkTopologyStrategy and 3 replicas per data center; or point "
						+ "journal.cassandra.keyspace at an existing one (journal.cassandra.embedded.enabled=true creates it "
						+ "on the embedded development node). A missing table is created at start-up unless "
						+ "journal.cassandra.auto-create-tables=false; a table with other columns must be fixed by hand.",
				cause);
	}

}
