package io.cassandrajournal.testsupport;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.launcher.CassandraNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A node's life cycle through the launcher: it starts and answers CQL, a graceful restart keeps its schema and
 * data, a kill stops it at once (nothing listens any more), a start after the kill comes back on the same port with
 * the data the graceful stop flushed, and closing it wipes its temporary directory. (The launcher's
 * {@code CassandraNodeTest} ran start, kill, start and restart on a node of its own until 2026-12-02; the same
 * steps and checks run here once, with CQL reads on top.)
 */
class NodeRestartIT {

	@Test
	void schemaAndDataSurviveAGracefulRestartAndAKill() {
		Path dir;
		try (CassandraNode node = CassandraNode.builder().build()) {
			node.start();
			dir = node.directory();
			assertThat(node.isRunning()).isTrue();
			int port = node.nativePort();
			try (CqlSession session = TestSessions.open(List.of(node.contactPoint()), "datacenter1", null)) {
				session.execute("CREATE KEYSPACE restart_ks WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
				session.execute("CREATE TABLE restart_ks.t (k int PRIMARY KEY, v text)");
				session.execute("INSERT INTO restart_ks.t (k, v) VALUES (1, 'kept')");
			}
			node.restart();
			assertThat(node.nativePort()).as("native port after a restart").isEqualTo(port);
			try (CqlSession session = TestSessions.open(List.of(node.contactPoint()), "datacenter1", null)) {
				assertThat(session.execute("SELECT v FROM restart_ks.t WHERE k = 1").one().getString(0)).isEqualTo("kept");
			}
			node.kill();
			assertThat(node.isRunning()).isFalse();
			assertThatExceptionOfType(IOException.class).as("nothing listens on the native port after the kill")
				.isThrownBy(() -> new Socket(node.contactPoint().getAddress(), port).close());
			node.start();
			assertThat(node.nativePort()).as("native port after a start that follows a kill").isEqualTo(port);
			try (CqlSession session = TestSessions.open(List.of(node.contactPoint()), "datacenter1", null)) {
				assertThat(session.execute("SELECT v FROM restart_ks.t WHERE k = 1").one().getString(0))
					.as("flushed by the graceful stop, so it survives the kill").isEqualTo("kept");
			}
			assertThat(dir.resolve("data")).exists();
		}
		assertThat(dir).as("a temporary node's directory is wiped on close").doesNotExist();
	}

}
