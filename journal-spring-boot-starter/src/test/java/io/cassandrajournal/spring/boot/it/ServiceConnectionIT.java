package io.cassandrajournal.spring.boot.it;

import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.testcontainers.service.connection.ServiceConnection;
import org.testcontainers.cassandra.CassandraContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.spring.boot.autoconfigure.JournalSession;
import io.cassandrajournal.spring.boot.projection.TestEvents;
import io.cassandrajournal.testsupport.TestSessions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With Docker: {@code @ServiceConnection} on a Testcontainers {@code CassandraContainer} configures Spring
 * Boot's session, and the journal (no contact points of its own) uses it. Skipped where no Docker engine
 * runs.
 */
@Testcontainers(disabledWithoutDocker = true)
@SpringBootTest(classes = StarterTestApplication.class,
		properties = { "journal.cassandra.keyspace=service_connection", "journal.cassandra.use-tag-index=true",
				"journal.cassandra.projections.poll-interval=200ms" })
class ServiceConnectionIT {

	@Container
	@ServiceConnection
	static final CassandraContainer CASSANDRA = new CassandraContainer("cassandra:5.0.6");

	@Autowired
	private Journal journal;

	@Autowired
	private JournalSession session;

	@Autowired
	private StarterTestApplication.Views views;

	@BeforeAll
	static void keyspace() {
		try (CqlSession admin = TestSessions.open(List.of(CASSANDRA.getContactPoint()), CASSANDRA.getLocalDatacenter(),
				null)) {
			admin.execute("CREATE KEYSPACE IF NOT EXISTS service_connection WITH replication = "
					+ "{'class': 'SimpleStrategy', 'replication_factor': 1}");
		}
	}

	@Test
	void theJournalUsesTheSessionBuiltFromTheContainer() {
		assertThat(this.session.isOwned()).as("Spring Boot's session, from the container's connection details")
			.isFalse();
		this.journal.append("tc-1", 0, List.of(EventToAppend.of(new TestEvents.Deposited(3), "starter")))
			.toCompletableFuture()
			.join();
		await().until(() -> this.views.byTag.contains("tc-1#1+3"));
	}

}
