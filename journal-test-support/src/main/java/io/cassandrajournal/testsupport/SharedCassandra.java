package io.cassandrajournal.testsupport;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.launcher.CassandraCluster;
import io.cassandrajournal.launcher.CassandraNode;

/**
 * One Cassandra node per test JVM, started on first use and shared by every test class; killed and wiped
 * when the JVM exits.
 * <p>
 * Set the system property {@code cassandra.test.contact-points} (for example {@code 10.0.0.5:9042,10.0.0.6:9042})
 * to run against an existing cluster instead; {@code cassandra.test.datacenter} names its local data center
 * (default {@code datacenter1}).
 */
public final class SharedCassandra {

	private static final AtomicInteger KEYSPACES = new AtomicInteger();

	private static @Nullable CassandraNode node;

	private static @Nullable CassandraCluster cluster;

	private static @Nullable CqlSession adminSession;

	private SharedCassandra() {
	}

	/**
	 * Starts the shared node if needed.
	 * @return the node; fails if the tests run against external contact points
	 */
	public static synchronized CassandraNode node() {
		if (node == null) {
			// Never killed (a test that stops it stops it gracefully), so schema changes need not be flushed one by
			// one: every test class creates a keyspace and its tables. The keyspaces are kept to the end of the run,
			// and each table costs the node heap: with 512 MB the node died near the end of journal-core's
			// integration tests once they passed about 280 (2026-12-02; most likely its ExitOnOutOfMemoryError).
			CassandraNode started = CassandraNode.builder().maxHeap("1g").flushSchemaChanges(false).build();
			started.start();
			node = started;
		}
		return node;
	}

	/** @return the contact points of the shared node, or of the external cluster when configured */
	public static List<InetSocketAddress> contactPoints() {
		String external = System.getProperty("cassandra.test.contact-points");
		if (external != null && !external.isBlank()) {
			List<InetSocketAddress> points = new ArrayList<>();
			for (String point : external.split(",")) {
				String[] hostPort = point.trim().split(":");
				points.add(new InetSocketAddress(hostPort[0], (hostPort.length > 1) ? Integer.parseInt(hostPort[1]) : 9042));
			}
			return points;
		}
		return List.of(node().contactPoint());
	}

	/** @return the local data center of {@link #contactPoints()} */
	public static String datacenter() {
		return System.getProperty("cassandra.test.datacenter", "datacenter1");
	}

	/**
	 * Creates a keyspace with a unique name (SimpleStrategy, replication factor 1).
	 * @param hint a readable part of the name, such as the test class name
	 * @return the keyspace name
	 */
	public static String createKeyspace(String hint) {
		String name = uniqueName(hint);
		adminSession().execute("CREATE KEYSPACE " + name
				+ " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
		return name;
	}

	/**
	 * @param hint a readable part of the name
	 * @return a valid CQL identifier, unique in this JVM and across JVMs sharing a cluster
	 */
	public static String uniqueName(String hint) {
		String clean = hint.toLowerCase().replaceAll("[^a-z0-9]", "");
		if (clean.length() > 24) {
			clean = clean.substring(clean.length() - 24);
		}
		return "ks_" + clean + "_" + ProcessHandle.current().pid() + "_" + KEYSPACES.incrementAndGet();
	}

	/** @return a session without keyspace, shared by the JVM; do not close it */
	public static synchronized CqlSession adminSession() {
		if (adminSession == null) {
			adminSession = TestSessions.open(contactPoints(), datacenter(), null);
		}
		return adminSession;
	}

	/**
	 * Replaces the JVM's admin session after a test restarted the shared node. The old one reconnects on its own
	 * schedule: its requests fail with NoNodeAvailableException until its pool is back, and its control connection
	 * can stay away longer (seen: the driver warning "Control channel not available" on a DDL half a minute after
	 * the restart, and the next {@link #createKeyspace} timing out after 20 s). A test that restarts
	 * {@link #node()} calls this once the node is up again, so the classes run after it get a connected session.
	 */
	public static synchronized void reconnectAdminSession() {
		CqlSession old = adminSession;
		adminSession = null;
		if (old != null) {
			old.close();
		}
		adminSession();
	}

	/**
	 * Starts (once per JVM) a 3-node cluster on 127.0.0.1-3. Only tests tagged {@code cluster} use it; they
	 * run with {@code ./mvnw -Pcluster-tests verify}.
	 * @return the running cluster
	 */
	public static synchronized CassandraCluster cluster() {
		if (cluster == null) {
			CassandraCluster started = CassandraCluster.builder().size(3).maxHeap("512m").build();
			Runtime.getRuntime().addShutdownHook(new Thread(started::close, "cassandra-test-cluster-shutdown"));
			started.start();
			cluster = started;
		}
		return cluster;
	}

}
