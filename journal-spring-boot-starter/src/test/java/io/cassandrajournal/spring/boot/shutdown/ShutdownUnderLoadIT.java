package io.cassandrajournal.spring.boot.shutdown;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.ConsistencyReport;
import io.cassandrajournal.launcher.CassandraNode;
import io.cassandrajournal.serialization.JacksonEventSerializer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Ctrl-C under load: an application with the embedded node (persistent directory) appends from four writers and
 * gets {@code SIGTERM}. The node must stop only after the application context has closed: then no append fails
 * during shutdown, every acknowledged append is in the journal, and no entity has a crash gap. (Before the node's
 * shutdown was deferred to Spring Boot's shutdown hook, the launcher's own hook stopped Cassandra while the writers
 * were still finishing their appends.)
 */
class ShutdownUnderLoadIT {

	@TempDir
	Path directory;

	@Test
	void sigtermUnderLoadLeavesNoGapAndLosesNoAcknowledgedAppend() throws Exception {
		int port = freePort();
		Path data = this.directory.resolve("node");
		Path output = this.directory.resolve("app.log");
		List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
				"-Xmx256m", "-cp", System.getProperty("java.class.path"), AppendingApplication.class.getName(),
				"--journal.cassandra.embedded.enabled=true", "--journal.cassandra.embedded.directory=" + data,
				"--journal.cassandra.embedded.port=" + port, "--journal.cassandra.embedded.max-heap=512m",
				"--journal.cassandra.keyspace=shutdown_ks", "--spring.cassandra.keyspace-name=shutdown_ks",
				"--spring.main.web-application-type=none", "--journal.cassandra.projections.enabled=false"));
		Process app = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
		try {
			// Start-up includes the node (~30-60 s on two cores); then wait for some acknowledged appends.
			await().atMost(Duration.ofMinutes(4)).pollInterval(Duration.ofMillis(500))
				.until(() -> !app.isAlive() || acks(output).size() >= 400);
			assertThat(app.isAlive()).as(tail(output)).isTrue();
			app.destroy(); // SIGTERM, as Ctrl-C or a container stop
			assertThat(app.waitFor(3, TimeUnit.MINUTES)).as("the application exits").isTrue();
		}
		finally {
			app.destroyForcibly();
		}
		String log = Files.readString(output);
		assertThat(log).as(tail(output)).contains("WRITERS STOPPED");
		assertThat(log.lines().filter((line) -> line.startsWith("FAIL "))).as("no append fails while shutting down: " + tail(output))
			.isEmpty();
		Map<String, Long> acknowledged = new HashMap<>();
		for (String[] ack : acks(output)) {
			acknowledged.merge(ack[1], Long.parseLong(ack[2]), Math::max);
		}
		assertThat(acknowledged).hasSize(4);

		try (CassandraNode node = CassandraNode.builder().persistentDirectory(data).nativePort(port).maxHeap("512m").build()) {
			node.start();
			try (CqlSession session = CqlSession.builder().addContactPoint(node.contactPoint())
				.withLocalDatacenter(node.datacenter())
				.build()) {
				CassandraJournal journal = CassandraJournal.create(session,
						CassandraJournalOptions.create().withKeyspace("shutdown_ks"), new JacksonEventSerializer());
				for (Map.Entry<String, Long> entry : acknowledged.entrySet()) {
					ConsistencyReport report = journal.checkConsistency(entry.getKey()).toCompletableFuture().join();
					assertThat(report.highestStored()).as(entry.getKey() + ": every acknowledged append is there")
						.isGreaterThanOrEqualTo(entry.getValue());
					assertThat(report.storedEvents()).as(entry.getKey() + ": every acknowledged append is there")
						.isGreaterThanOrEqualTo(entry.getValue());
					assertThat(report.missing()).as(entry.getKey() + ": no crash gap").isEmpty();
					assertThat(report.head()).as(entry.getKey() + ": nothing claimed without events").isEqualTo(report.highestStored());
				}
			}
		}
	}

	private static List<String[]> acks(Path output) throws IOException {
		if (!Files.exists(output)) {
			return List.of();
		}
		return Files.readAllLines(output).stream().filter((line) -> line.startsWith("ACK ")).map((line) -> line.split(" "))
			.toList();
	}

	private static String tail(Path output) throws IOException {
		List<String> lines = Files.exists(output) ? Files.readAllLines(output) : List.of();
		return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
	}

	private static int freePort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0)) {
			return socket.getLocalPort();
		}
	}

}
