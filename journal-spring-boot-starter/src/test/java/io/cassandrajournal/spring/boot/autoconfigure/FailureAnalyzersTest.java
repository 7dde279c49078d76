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
		assertThat(analysis.getAction()).contains("Create the keyspace");
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
