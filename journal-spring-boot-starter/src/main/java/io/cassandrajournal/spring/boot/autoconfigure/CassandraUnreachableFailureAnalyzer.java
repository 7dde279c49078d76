package io.cassandrajournal.spring.boot.autoconfigure;

import java.util.List;

import javax.net.ssl.SSLException;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.auth.AuthenticationException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Turns "no Cassandra node answered" at start-up into a failure report that says which contact points were
 * tried and what to check: refused credentials and failed TLS handshakes get reports of their own. The report
 * quotes the driver's messages, which name the user but never the password.
 */
final class CassandraUnreachableFailureAnalyzer extends AbstractFailureAnalyzer<AllNodesFailedException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, AllNodesFailedException cause) {
		List<Throwable> errors = cause.getAllErrors().values().stream().flatMap(List::stream).toList();
		Throwable refused = first(errors, AuthenticationException.class);
		if (refused != null) {
			return new FailureAnalysis("Cassandra refused the journal's credentials: " + refused.getMessage(),
					"Check journal.cassandra.username and journal.cassandra.password (or spring.cassandra.username and "
							+ "spring.cassandra.password when the journal uses Spring Boot's session), and that the role "
							+ "may log in. Credentials are not retried: a wrong password fails start-up at once.",
					cause);
		}
		Throwable handshake = first(errors, SSLException.class);
		if (handshake != null) {
			return new FailureAnalysis("The TLS handshake with Cassandra failed: " + handshake.getMessage(),
					"Each node's certificate must be signed by an authority the application trusts (the JVM's trust "
							+ "store, or an SSLContext from a CassandraJournalOptionsCustomizer) and name the host in "
							+ "journal.cassandra.contact-points as a subject alternative name. "
							+ "journal.cassandra.ssl-hostname-validation=false skips the name check, which lets anyone "
							+ "with a certificate from that authority read and write the journal.",
					cause);
		}
		return new FailureAnalysis("The journal could not reach Cassandra: " + cause.getMessage(),
				"Check that Cassandra runs and answers CQL on the contact points (journal.cassandra.contact-points, or "
						+ "spring.cassandra.contact-points when those are empty) and that local-datacenter names the data "
						+ "center of those nodes. The journal's own session tried for journal.cassandra.startup-wait (default 30s); "
						+ "raise it if Cassandra starts after the application. For development, journal.cassandra.embedded.enabled=true starts a node.",
				cause);
	}

	private static Throwable first(List<Throwable> errors, Class<? extends Throwable> type) {
		for (Throwable error : errors) {
			for (Throwable t = error; t != null; t = t.getCause()) {
				if (type.isInstance(t)) {
					return t;
				}
			}
		}
		return null;
	}

}
