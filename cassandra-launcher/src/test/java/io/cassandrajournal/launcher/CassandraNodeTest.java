package io.cassandrajournal.launcher;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.launcher.internal.JavaRuntime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Starts real nodes: the launcher has no other way to be proven. The life cycle of a node that starts (start,
 * restart, kill, start again on the same port, wiped on close) is driven with CQL reads by
 * {@code journal-test-support}'s {@code NodeRestartIT}, in the same default verify; here, the ways a start fails
 * and the orphan check.
 */
class CassandraNodeTest {

	@Test
	void failsClearlyWhenTheCqlPortIsTaken() throws Exception {
		try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
				CassandraNode node = CassandraNode.builder().nativePort(taken.getLocalPort()).build()) {
			assertThatExceptionOfType(CassandraLaunchException.class).isThrownBy(node::start)
				.withMessageContaining("native_transport_port " + taken.getLocalPort())
				.withMessageContaining("already in use");
			assertThat(node.isRunning()).isFalse();
		}
	}

	@Test
	void failsWithTheNodeLogWhenCassandraCannotBindItsStoragePort() throws Exception {
		try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"));
				CassandraNode node = CassandraNode.builder().storagePort(taken.getLocalPort()).build()) {
			assertThatExceptionOfType(CassandraLaunchException.class).isThrownBy(node::start)
				.withMessageContaining("exited with code")
				.withMessageContaining("last lines of")
				.withMessageContaining(String.valueOf(taken.getLocalPort()));
			assertThat(node.isRunning()).isFalse();
		}
	}

	@Test
	void nodeDiesWithinSecondsWhenItsParentJvmIsKilled() throws Exception {
		String java = JavaRuntime.resolveJavaExecutable().toString();
		Process parent = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
				StartNodeAndWait.class.getName())
			.redirectErrorStream(true)
			.start();
		long nodePid;
		try (BufferedReader out = new BufferedReader(
				new InputStreamReader(parent.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			nodePid = -1;
			while ((line = out.readLine()) != null) {
				if (line.startsWith("NODE_PID=")) {
					nodePid = Long.parseLong(line.substring("NODE_PID=".length()));
					break;
				}
			}
		}
		assertThat(nodePid).as("the parent printed its node's pid").isPositive();
		ProcessHandle node = ProcessHandle.of(nodePid).orElseThrow();
		parent.destroyForcibly();
		parent.waitFor(10, TimeUnit.SECONDS);
		assertThat(node.onExit().completeOnTimeout(null, 10, TimeUnit.SECONDS).get())
			.as("node process exited within 10 s of its parent's SIGKILL")
			.isNotNull();
		assertThat(node.isAlive()).isFalse();
	}

	@Test
	void rejectsBadSettings() {
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> CassandraNode.builder().maxHeap("lots"))
			.withMessageContaining("maxHeap");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> CassandraNode.builder().nativePort(70000))
			.withMessageContaining("nativePort");
		assertThat(CassandraCluster.Builder.token(0, 3)).isEqualTo(String.valueOf(Long.MIN_VALUE));
		assertThat(List.of(CassandraCluster.Builder.token(1, 3), CassandraCluster.Builder.token(2, 3)))
			.containsExactly("-3074457345618258603", "3074457345618258602");
	}

	/** Run in a separate JVM by {@link #nodeDiesWithinSecondsWhenItsParentJvmIsKilled()}. */
	public static final class StartNodeAndWait {

		public static void main(String[] args) throws InterruptedException {
			CassandraNode node = CassandraNode.builder().build();
			node.start();
			System.out.println("NODE_PID=" + node.pid());
			System.out.flush();
			Thread.sleep(TimeUnit.MINUTES.toMillis(5));
		}

	}

}
