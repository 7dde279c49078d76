package io.cassandrajournal.spring.boot.embedded;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.SpringApplication;

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

	/** @return the running embedded node, if this JVM started one */
	public static synchronized @Nullable CassandraNode node() {
		return node;
	}

}
