package io.cassandrajournal.spring.boot.autoconfigure;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns "no Cassandra node answered" at start-up into a failure report that says which contact points were
 * tried and what to check.
 */
final class CassandraUnreachableFailureAnalyzer extends AbstractFailureAnalyzer<AllNodesFailedException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, AllNodesFailedException cause) {
		return new FailureAnalysis("The journal could not reach Cassandra: " + cause.getMessage(),
				"Check that Cassandra runs and answers CQL on the contact points (journal.cassandra.contact-points, or "
						+ "spring.cassandra.contact-points when those are empty) and that local-datacenter names the data "
						+ "center of those nodes. The journal's own session tried for journal.cassandra.startup-wait (default 30s); "
						+ "raise it if Cassandra starts after the application. For development, journal.cassandra.embedded.enabled=true starts a node.",
				cause);
	}

}
