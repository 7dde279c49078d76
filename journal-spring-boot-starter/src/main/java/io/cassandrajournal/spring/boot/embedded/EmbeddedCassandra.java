package io.cassandrajournal.spring.boot.embedded;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.SpringApplication;

import io.cassandrajournal.launcher.CassandraCluster;
import io.cassandrajournal.launcher.CassandraNode;

/**
 * The embedded node of this JVM: at most one, started on first request and reused by every application
 * context of the JVM (tests start several). Stopped when the JVM exits, after Spring Boot's shutdown hook has
 * closed every application context (so cursors are saved and appends in flight finish first): {@code SIGTERM} for
 * a persistent directory (Cassandra drains), kill and wipe for a temporary one. It also dies on its own within
 * seconds if this JVM is killed.
 */
public final class EmbeddedCassandra {

	private static @Nullable CassandraNode node;

	private static @Nullable CassandraCluster cluster;

	private EmbeddedCassandra() {
	}

	/**
	 * @param host where the application expects Cassandra
	 * @param port its CQL port
	 * @return whether something already speaks CQL there
	 */
	public static boolean answers(String host, int port) {
		return CassandraNode.answersCql(new InetSocketAddress(host, port));
	}

	/**
	 * Starts the node unless it is running.
	 * @param port the CQL port, 0 for a free one
	 * @param directory persistent data directory, or {@code null} for a temporary one
	 * @param maxHeap the node's maximum heap
	 * @param startupTimeout how long to wait for CQL
	 * @return the node's contact point
	 */
	public static synchronized InetSocketAddress start(int port, @Nullable Path directory, String maxHeap,
			Duration startupTimeout) {
		if (node == null || !node.isRunning()) {
			CassandraNode.Builder builder = CassandraNode.builder().nativePort(port).maxHeap(maxHeap)
				.startupTimeout(startupTimeout);
			if (directory != null) {
				builder.persistentDirectory(directory);
			}
			CassandraNode started = builder.build();
			started.start();
			// Stop the node only after every application context has closed (cursors saved, appends finished):
			// Spring Boot's shutdown hook runs its handlers after closing the contexts; the launcher's own hook waits
			// for that, up to a minute, instead of stopping the node while the application is still closing.
			started.deferShutdownToOwner(Duration.ofMinutes(1));
			SpringApplication.getShutdownHandlers().add(started::close);
			node = started;
		}
		return node.contactPoint();
	}

	/**
	 * Starts a local cluster unless one is running: {@code nodes} nodes on 127.0.0.1 .. 127.0.0.N, free ports,
	 * temporary data, each stopped after the application contexts have closed.
	 * @param nodes 2 to 9
	 * @param maxHeap each node's maximum heap
	 * @param startupTimeout how long to wait for each node
	 * @return the cluster's nodes: contact points and process ids, node 0 (127.0.0.1, the seed) first
	 */
	public static synchronized java.util.List<Member> startCluster(int nodes, String maxHeap,
			Duration startupTimeout) {
		if (cluster != null && cluster.nodes().size() != nodes) {
			throw new IllegalStateException("This JVM already runs an embedded cluster of " + cluster.nodes().size()
					+ " nodes; journal.cassandra.embedded.nodes asks for " + nodes + ". Use one size per JVM.");
		}
		if (cluster == null || cluster.nodes().stream().noneMatch(CassandraNode::isRunning)) {
			CassandraCluster started = CassandraCluster.builder().size(nodes).maxHeap(maxHeap)
				.startupTimeout(startupTimeout).build();
			try {
				started.start();
			}
			catch (RuntimeException ex) {
				// Nodes started before the failing one (e.g. 127.0.0.3 missing on a system without loopback
				// aliases) and the temporary directory would otherwise outlive the failed start-up.
				started.close();
				throw ex;
			}
			for (CassandraNode member : started.nodes()) {
				member.deferShutdownToOwner(Duration.ofMinutes(1));
			}
			SpringApplication.getShutdownHandlers().add(started::close);
			cluster = started;
		}
		return cluster.nodes().stream().map((n) -> new Member(n.contactPoint(), n.pid())).toList();
	}

	/**
	 * A node of the embedded cluster.
	 * @param contactPoint its CQL address
	 * @param pid its process id (to kill it and watch the journal carry on)
	 */
	public record Member(InetSocketAddress contactPoint, long pid) {
	}

	/** @return the running embedded cluster, if this JVM started one */
	public static synchronized @Nullable CassandraCluster cluster() {
		return cluster;
	}

	/** @return the running embedded node, if this JVM started one */
	public static synchronized @Nullable CassandraNode node() {
		return node;
	}

}
