package io.cassandrajournal.testsupport;

import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.testcontainers.cassandra.CassandraContainer;
import org.testcontainers.junit.jupiter.Container;
import org.testcontainers.junit.jupiter.Testcontainers;

/**
 * {@link CqlBasicsContract} on a Cassandra container; skipped where no Docker engine runs.
 */
@Testcontainers(disabledWithoutDocker = true)
class TestcontainersCqlBasicsIT extends CqlBasicsContract {

	@Container
	static final CassandraContainer CASSANDRA = new CassandraContainer("cassandra:5.0.6");

	private static CqlSession session;

	@BeforeAll
	static void connect() {
		try (CqlSession admin = TestSessions.open(List.of(CASSANDRA.getContactPoint()), CASSANDRA.getLocalDatacenter(),
				null)) {
			admin.execute("CREATE KEYSPACE IF NOT EXISTS tc WITH replication = "
					+ "{'class': 'SimpleStrategy', 'replication_factor': 1}");
		}
		session = TestSessions.open(List.of(CASSANDRA.getContactPoint()), CASSANDRA.getLocalDatacenter(), "tc");
	}

	@AfterAll
	static void close() {
		if (session != null) {
			session.close();
		}
	}

	@Override
	protected CqlSession session() {
		return session;
	}

}
