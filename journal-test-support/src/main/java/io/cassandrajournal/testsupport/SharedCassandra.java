package io.cassandrajournal.testsupport;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.launcher.CassandraCluster;
import io.cassandrajournal.launcher.CassandraNode;

/**
 * One Cassandra node per test JVM, started on first use and shared by every test class; killed and wiped
 * when the JVM exits. Before that, if the node died or a test of the JVM failed, its log directory is copied to
 * {@code target/cassandra-node-logs/<time>-pid<test JVM pid>/} (system property {@code cassandra.test.node-logs}
 * names another folder), with a {@code reason.txt}: the next failure says why.
 * <p>
 * Set the system property {@code cassandra.test.contact-points} (for example {@code 10.0.0.5:9042,10.0.0.6:9042})
 * to run against an existing cluster instead; {@code cassandra.test.datacenter} names its local data center
 * (default {@code datacenter1}).
 */
public final class SharedCassandra {

	private static final AtomicInteger KEYSPACES = new AtomicInteger();

	/** How long the JVM's exit waits for this class's hook to keep the node's log before the launcher's hook wipes it. */
	private static final Duration LOG_GRACE = Duration.ofSeconds(30);

	/** The first failed tests of this JVM ({@link FailedTestsListener}), for {@code reason.txt}. */
	private static final List<String> FAILURES = new CopyOnWriteArrayList<>();

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
			// one: every test class creates a keyspace and its tables. Each table costs the node heap: with 512 MB,
			// and every class's keyspace kept to the end of the run, the node died near the end of journal-core's
			// integration tests once they passed about 280 (2026-12-02; most likely its ExitOnOutOfMemoryError).
			// CassandraTestExtension now drops each class's keyspace after the class.
			CassandraNode started = CassandraNode.builder().maxHeap("1g").flushSchemaChanges(false).build();
			// The launcher's own hook would wipe the node's directory, log included, at once: ours goes first.
			started.deferShutdownToOwner(LOG_GRACE);
			Runtime.getRuntime().addShutdownHook(new Thread(() -> closeKeepingLog(started), "cassandra-test-node-shutdown"));
			started.start();
			node = started;
		}
		return node;
	}

	private static void closeKeepingLog(CassandraNode started) {
		try {
			String reason = NodeLogs.reason(started.pid() != -1 && !started.isRunning(), FAILURES);
			if (reason != null) {
				Path kept = NodeLogs.keep(started.directory(), NodeLogs.destination(), reason);
				System.err.println("Kept the shared Cassandra node's log in " + kept + " (" + reason.lines().findFirst()
					.orElse("") + ")");
			}
		}
		catch (RuntimeException ex) {
			System.err.println("Could not keep the shared Cassandra node's log: " + ex);
		}
		finally {
			started.close();
		}
	}

	/**
	 * Records a failed test (or class) of this JVM: the shared node's log is then kept when the JVM exits.
	 * @param what the test's name
	 */
	static void recordFailure(String what) {
		if (FAILURES.size() < 20) {
			FAILURES.add(what);
		}
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
	 * Drops a keyspace (if it exists) through the admin session. A failure is printed, not thrown: a class whose
	 * tests passed does not fail on its clean-up (a node that died fails the next class anyway, and its log is kept).
	 * @param name the keyspace name
	 */
	public static void dropKeyspace(String name) {
		if (!name.matches("[A-Za-z0-9_]+")) {
			throw new IllegalArgumentException("Not a keyspace name: '" + name + "'");
		}
		long started = System.nanoTime();
		try {
			adminSession().execute("DROP KEYSPACE IF EXISTS " + name);
			// In the test's output file: what the drops cost the suite.
			System.out.println("Dropped keyspace " + name + " in " + (System.nanoTime() - started) / 1_000_000 + " ms");
		}
		catch (RuntimeException ex) {
			System.err.println("Could not drop keyspace " + name + " on the shared Cassandra node: " + ex);
		}
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
			// Only CREATE and DROP KEYSPACE go through it: without schema metadata the driver does not read the whole
			// schema of the node again after each of them (it still waits for schema agreement).
			adminSession = TestSessions.open(contactPoints(), datacenter(), null,
					TestSessions.testConfig().withBoolean(DefaultDriverOption.METADATA_SCHEMA_ENABLED, false));
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
