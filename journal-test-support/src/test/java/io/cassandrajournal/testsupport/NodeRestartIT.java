package io.cassandrajournal.testsupport;

import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.launcher.CassandraNode;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A graceful restart of a node keeps its schema and data.
 */
class NodeRestartIT {

	@Test
	void schemaAndDataSurviveAGracefulRestartAndAKill() {
		try (CassandraNode node = CassandraNode.builder().build()) {
			node.start();
			try (CqlSession session = TestSessions.open(List.of(node.contactPoint()), "datacenter1", null)) {
				session.execute("CREATE KEYSPACE restart_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
				session.execute("CREATE TABLE restart_ks.t (k int PRIMARY KEY, v text)");
				session.execute("INSERT INTO restart_ks.t (k, v) VALUES (1, 'kept')");
			}
			node.restart();
			try (CqlSession session = TestSessions.open(List.of(node.contactPoint()), "datacenter1", null)) {
				assertThat(session.execute("SELECT v FROM restart_ks.t WHERE k = 1").one().getString(0)).isEqualTo("kept");
			}
			node.kill();
			node.start();
			try (CqlSession session = TestSessions.open(List.of(node.contactPoint()), "datacenter1", null)) {
				assertThat(session.execute("SELECT v FROM restart_ks.t WHERE k = 1").one().getString(0))
					.as("flushed by the graceful stop, so it survives the kill").isEqualTo("kept");
			}
		}
	}

}
