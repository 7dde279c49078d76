package io.cassandrajournal.launcher.internal;

import java.nio.file.Path;
import java.time.Duration;

import io.cassandrajournal.launcher.CommitLogMode;

/**
 * Everything needed to fork one node, with ports already resolved, so a restart reuses them.
 *
 * @param clusterName the cluster name written to cassandra.yaml
 * @param host the listen and rpc address (127.0.0.x)
 * @param nativePort the CQL port
 * @param storagePort the internode port
 * @param seeds the seed list, {@code host:port} comma separated
 * @param initialToken the node's single token
 * @param directory the node's own directory (data, commit log, logs, config)
 * @param temporary whether the directory is wiped when the node is closed or orphaned
 * @param initialHeap the {@code -Xms} value, such as {@code 256m}
 * @param maxHeap the {@code -Xmx} value, such as {@code 512m}
 * @param commitLogMode how the commit log is synced
 * @param ringDelay {@code cassandra.ring_delay_ms}
 * @param passwordAuthentication whether {@code PasswordAuthenticator} is on (user and password
 * {@code cassandra})
 * @param startupTimeout how long {@code start()} waits for CQL to answer
 * @param javaExecutable the java binary of the child JVM
 * @param clientEncryption TLS for client connections, or {@code null} for plain connections
 * @param flushSchemaChanges whether the schema tables are flushed after each schema change
 * ({@code cassandra.test.flush_local_schema_changes})
 * @param processors the cores the node sizes its thread pools for ({@code -XX:ActiveProcessorCount}), or 0 for
 * what its JVM sees
 */
public record NodeSpec(String clusterName, String host, int nativePort, int storagePort, String seeds,
		String initialToken, Path directory, boolean temporary, String initialHeap, String maxHeap,
		CommitLogMode commitLogMode, Duration ringDelay, boolean passwordAuthentication, Duration startupTimeout,
		Path javaExecutable, ClientEncryption clientEncryption, boolean flushSchemaChanges, int processors) {

	/**
	 * TLS on the native transport: every client must use it.
	 *
	 * @param keystore a JKS keystore holding the node's key and certificate (chain)
	 * @param password the keystore's password (also the key's)
	 */
	public record ClientEncryption(Path keystore, String password) {

		@Override
		public String toString() {
			return "ClientEncryption[keystore=" + this.keystore + "]";
		}

	}

	public Path logFile() {
		return this.directory.resolve("logs").resolve("system.log");
	}

	public Path configFile() {
		return this.directory.resolve("conf").resolve("cassandra.yaml");
	}

	public Path logbackFile() {
		return this.directory.resolve("conf").resolve("logback.xml");
	}

}
