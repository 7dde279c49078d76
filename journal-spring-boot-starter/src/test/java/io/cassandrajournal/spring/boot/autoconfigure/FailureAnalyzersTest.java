package io.cassandrajournal.spring.boot.autoconfigure;

import java.util.Map;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.BeanCreationException;
import org.springframework.boot.diagnostics.FailureAnalysis;

import io.cassandrajournal.JournalSchemaException;
import io.cassandrajournal.spring.boot.projection.ProjectionDeclarationException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each start-up failure a user meets gets a description and an action.
 */
class FailureAnalyzersTest {

	@Test
	void schemaProblems() {
		FailureAnalysis analysis = new JournalSchemaFailureAnalyzer()
			.analyze(new JournalSchemaException("Keyspace 'bank' does not exist"));
		assertThat(analysis.getDescription()).contains("Keyspace 'bank' does not exist");
		assertThat(analysis.getAction()).contains("create it");
	}

	@Test
	void badProjectionHandlers() {
		FailureAnalysis analysis = new ProjectionDeclarationFailureAnalyzer()
			.analyze(new ProjectionDeclarationException("views", "on", "declares no source"));
		assertThat(analysis.getDescription()).contains("views.on").contains("declares no source");
		assertThat(analysis.getAction()).contains("views.on");
	}

	@Test
	void unreachableCassandra() {
		FailureAnalysis analysis = new CassandraUnreachableFailureAnalyzer()
			.analyze(AllNodesFailedException.fromErrors(Map.of()));
		assertThat(analysis.getAction()).contains("journal.cassandra.contact-points").contains("embedded.enabled");
	}

	@Test
	void anUnsetKeyspaceIsAReportEvenWhenAnotherBeanFailedFirst() {
		BeanCreationException failure = new BeanCreationException("cassandraJournal", "failed",
				new BeanCreationException("cassandraJournalOptions", "failed", new IllegalStateException(
						"journal.cassandra.keyspace is not set (nor spring.cassandra.keyspace-name)")));
		FailureAnalysis analysis = new InvalidJournalOptionFailureAnalyzer().analyze(failure);
		assertThat(analysis).isNotNull();
		assertThat(analysis.getDescription()).contains("journal.cassandra.keyspace is not set");
	}

	@Test
	void aMissingKeyspaceIsExplainedForOneNodeAndForProduction() {
		FailureAnalysis analysis = new JournalSchemaFailureAnalyzer()
			.analyze(new JournalSchemaException("Keyspace 'bank' does not exist"));
		assertThat(analysis.getAction()).contains("'replication_factor': 1").contains("NetworkTopologyStrategy");
	}

	@Test
	void refusedCredentialsNameThePropertiesButNotThePassword() {
		com.datastax.oss.driver.api.core.metadata.Node node = org.mockito.Mockito
			.mock(com.datastax.oss.driver.api.core.metadata.Node.class);
		com.datastax.oss.driver.api.core.metadata.EndPoint endPoint = org.mockito.Mockito
			.mock(com.datastax.oss.driver.api.core.metadata.EndPoint.class);
		FailureAnalysis analysis = new CassandraUnreachableFailureAnalyzer().analyze(AllNodesFailedException.fromErrors(
				Map.of(node, new com.datastax.oss.driver.api.core.auth.AuthenticationException(endPoint,
						"Provided username app and/or password are incorrect"))));
		assertThat(analysis.getDescription()).contains("refused the journal's credentials");
		assertThat(analysis.getAction()).contains("journal.cassandra.username").contains("journal.cassandra.password");
	}

	@Test
	void failedTlsHandshakesSayWhatTheCertificateMustName() {
		com.datastax.oss.driver.api.core.metadata.Node node = org.mockito.Mockito
			.mock(com.datastax.oss.driver.api.core.metadata.Node.class);
		FailureAnalysis analysis = new CassandraUnreachableFailureAnalyzer().analyze(AllNodesFailedException.fromErrors(
				Map.of(node, new IllegalStateException("connect failed",
						new javax.net.ssl.SSLHandshakeException("No subject alternative names matching IP address 127.0.0.1")))));
		assertThat(analysis.getDescription()).contains("TLS handshake").contains("No subject alternative names");
		assertThat(analysis.getAction()).contains("subject alternative name").contains("ssl-hostname-validation");
	}

	@Test
	void invalidOptions() {
		BeanCreationException failure = new BeanCreationException("cassandraJournalOptions", "failed",
				new IllegalArgumentException("eventsTable must be a plain CQL identifier"));
		FailureAnalysis analysis = new InvalidJournalOptionFailureAnalyzer().analyze(failure);
		assertThat(analysis.getDescription()).contains("eventsTable must be a plain CQL identifier");
		assertThat(analysis.getAction()).contains("journal.cassandra.events-table");
		assertThat(new InvalidJournalOptionFailureAnalyzer()
			.analyze(new BeanCreationException("other", "failed", new IllegalArgumentException("x")))).isNull();
	}

}
