package io.cassandrajournal.launcher;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.cassandrajournal.launcher.internal.CqlProbe;
import io.cassandrajournal.launcher.internal.JavaRuntime;
import io.cassandrajournal.launcher.internal.JvmCommand;
import io.cassandrajournal.launcher.internal.NodeDirectories;
import io.cassandrajournal.launcher.internal.NodeSpec;
import io.cassandrajournal.launcher.internal.Ports;

/**
 * One real Apache Cassandra 5.0 node running in a child JVM.
 * <p>
 * Build it with {@link #builder()}, then {@link #start()} blocks until the node answers CQL. The node
 * never outlives the JVM that started it: it watches its parent and exits when the parent dies, even by
 * {@code SIGKILL}; a JVM shutdown hook also stops every node still running.
 *
 * <pre>{@code
 * try (CassandraNode node = CassandraNode.builder().maxHeap("512m").build()) {
 *     node.start();
 *     InetSocketAddress contactPoint = node.contactPoint();
 *     ...
 * }
 * }</pre>
 *
 * Instances are thread-safe; lifecycle methods are serialized.
 */
public final class CassandraNode implements AutoCloseable {

	private static final Set<CassandraNode> RUNNING = ConcurrentHashMap.newKeySet();

	static {
		Runtime.getRuntime().addShutdownHook(new Thread(CassandraNode::shutdownAll, "cassandra-launcher-shutdown"));
	}

	private final NodeSpec spec;

	private Process process;

	private boolean closed;

	/** Above 0: the JVM's exit waits this long for the node's owner to close it. */
	private volatile long ownerGraceNanos;

	CassandraNode(NodeSpec spec) {
		this.spec = spec;
	}

	/**
	 * Returns a builder for a single node on 127.0.0.1 with free ports, a temporary directory, a 512 MB
	 * heap and the periodic commit log.
	 * @return a new builder
	 */
	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Forks the node and waits until it answers CQL. Does nothing if it is already running.
	 * @throws CassandraLaunchException if the node exits, a port is taken, or CQL does not answer within the
	 * startup timeout; the message ends with the tail of the node's log
	 */
	public synchronized void start() {
		if (this.closed) {
			throw new IllegalStateException("Node " + describe() + " is closed");
		}
		if (isRunning()) {
			return;
		}
		if (CqlProbe.portInUse(this.spec.host(), this.spec.nativePort())) {
			throw new CassandraLaunchException("Cannot start Cassandra: native_transport_port " + this.spec.nativePort()
					+ " on " + this.spec.host() + " is already in use by another process. Stop that process or "
					+ "choose another port (0 picks a free one).");
		}
		try {
			NodeDirectories.prepare(this.spec);
			ProcessBuilder builder = new ProcessBuilder(JvmCommand.build(this.spec));
			builder.redirectErrorStream(true);
			builder.redirectOutput(ProcessBuilder.Redirect.appendTo(this.spec.logFile().toFile()));
			builder.redirectInput(ProcessBuilder.Redirect.PIPE);
			this.process = builder.start();
		}
		catch (IOException ex) {
			throw new CassandraLaunchException("Cannot fork the Cassandra JVM (" + this.spec.javaExecutable() + "): "
					+ ex.getMessage(), ex);
		}
		RUNNING.add(this);
		NodeDirectories.recordOwner(this.spec.directory(), this.process.pid());
		awaitCql(this.spec.startupTimeout());
	}

	private void awaitCql(Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		InetSocketAddress address = contactPoint();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				RUNNING.remove(this);
				throw new CassandraLaunchException("Cassandra node " + describe() + " exited with code "
						+ this.process.exitValue() + " during start-up.\n" + logTailSection());
			}
			if (CqlProbe.answers(address, 1000, this.spec.clientEncryption() != null)) {
				return;
			}
			sleep(200);
		}
		destroy(true);
		throw new CassandraLaunchException("Cassandra node " + describe() + " did not answer CQL within " + timeout
				+ "; it was killed.\n" + logTailSection());
	}

	/**
	 * Stops the node gracefully with {@code SIGTERM} (Cassandra drains its memtables, about 7 s) and waits
	 * for the process to exit. Data stay in the node's directory for a later {@link #start()}.
	 */
	public synchronized void stop() {
		destroy(false);
	}

	/**
	 * Kills the node with {@code SIGKILL}, as a crash would. Writes acknowledged with
	 * {@link CommitLogMode#PERIODIC} may be lost; with {@link CommitLogMode#BATCH_SKIP_SYNC} they survive.
	 */
	public synchronized void kill() {
		destroy(true);
	}

	/** Stops the node gracefully and starts it again on the same ports and data. */
	public synchronized void restart() {
		stop();
		start();
	}

	/**
	 * Stops the node (a temporary node is killed, a persistent one stopped gracefully) and deletes its
	 * directory if it is temporary.
	 */
	@Override
	public synchronized void close() {
		if (this.closed) {
			return;
		}
		destroy(this.spec.temporary());
		this.closed = true;
		if (this.spec.temporary()) {
			try {
				NodeDirectories.delete(this.spec.directory());
			}
			catch (IOException ex) {
				throw new UncheckedIOException("Cannot wipe " + this.spec.directory(), ex);
			}
		}
	}

	private void destroy(boolean forcibly) {
		Process current = this.process;
		if (current == null || !current.isAlive()) {
			RUNNING.remove(this);
			return;
		}
		if (forcibly) {
			current.destroyForcibly();
		}
		else {
			current.destroy();
		}
		try {
			if (!current.waitFor(90, TimeUnit.SECONDS)) {
				current.destroyForcibly();
				current.waitFor(30, TimeUnit.SECONDS);
			}
		}
		catch (InterruptedException ex) {
			current.destroyForcibly();
			Thread.currentThread().interrupt();
		}
		RUNNING.remove(this);
	}

	/**
	 * @param address a CQL contact point
	 * @return whether something there answers the native protocol's {@code OPTIONS} request
	 */
	public static boolean answersCql(InetSocketAddress address) {
		return CqlProbe.answers(address, 1000);
	}

	/** @return whether the node's process is alive */
	public synchronized boolean isRunning() {
		return this.process != null && this.process.isAlive();
	}

	/** @return the pid of the node's process, or -1 if it was never started */
	public synchronized long pid() {
		return (this.process != null) ? this.process.pid() : -1;
	}

	/** @return the address to give the driver as contact point */
	public InetSocketAddress contactPoint() {
		return new InetSocketAddress(this.spec.host(), this.spec.nativePort());
	}

	/** @return the listen and rpc address, such as {@code 127.0.0.1} */
	public String host() {
		return this.spec.host();
	}

	/** @return the CQL port */
	public int nativePort() {
		return this.spec.nativePort();
	}

	/** @return the internode port */
	public int storagePort() {
		return this.spec.storagePort();
	}

	/** @return the node's directory (data, commit log, logs, configuration) */
	public Path directory() {
		return this.spec.directory();
	}

	/** @return the data center name, always {@code datacenter1} (SimpleSnitch) */
	public String datacenter() {
		return "datacenter1";
	}

	/**
	 * Returns the last lines of the node's log (Cassandra's output and the launcher's own messages).
	 * @param lines how many lines at most
	 * @return the lines, joined by newlines; empty if there is no log yet
	 */
	public String logTail(int lines) {
		Path log = this.spec.logFile();
		if (!Files.exists(log)) {
			return "";
		}
		try {
			List<String> all = Files.readAllLines(log, StandardCharsets.UTF_8);
			return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
		}
		catch (IOException ex) {
			return "(log unreadable: " + ex.getMessage() + ")";
		}
	}

	private String logTailSection() {
		return "--- last lines of " + this.spec.logFile() + " ---\n" + logTail(40);
	}

	private String describe() {
		return this.spec.host() + ":" + this.spec.nativePort();
	}

	@Override
	public String toString() {
		return "CassandraNode[" + describe() + ", dir=" + this.spec.directory() + "]";
	}

	/**
	 * Hands this node's shutdown at JVM exit to its owner. Without it, the launcher's JVM shutdown hook closes the
	 * node at once - while the application's own shutdown hook may still be saving cursors and finishing appends
	 * (JVM shutdown hooks run concurrently). After this call the hook first waits, up to {@code grace}, for the
	 * owner to {@link #close()} the node (an application closes it once its contexts have closed), and only then
	 * closes it itself.
	 * @param grace how long the JVM's exit may wait for the owner
	 */
	public void deferShutdownToOwner(Duration grace) {
		this.ownerGraceNanos = grace.toNanos();
	}

	private static void shutdownAll() {
		long deadline = System.nanoTime();
		for (CassandraNode node : new ArrayList<>(RUNNING)) {
			deadline = Math.max(deadline, System.nanoTime() + node.ownerGraceNanos);
		}
		while (System.nanoTime() < deadline && RUNNING.stream().anyMatch((node) -> node.ownerGraceNanos > 0)) {
			sleep(100);
		}
		for (CassandraNode node : new ArrayList<>(RUNNING)) {
			try {
				node.close();
			}
			catch (RuntimeException ex) {
				// the JVM is going down; the child's watchdog covers what is left
			}
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new CassandraLaunchException("Interrupted while waiting for Cassandra to start", ex);
		}
	}

	/**
	 * Builds a {@link CassandraNode}. Every setting has a default suited to tests on a small machine.
	 */
	public static final class Builder {

		private String host = "127.0.0.1";

		private int nativePort;

		private int storagePort;

		private Path directory;

		private String initialHeap = "256m";

		private String maxHeap = "512m";

		private CommitLogMode commitLogMode = CommitLogMode.PERIODIC;

		private Duration startupTimeout = Duration.ofMinutes(2);

		private boolean passwordAuthentication;

		private NodeSpec.ClientEncryption clientEncryption;

		private boolean flushSchemaChanges = true;

		private String clusterName = "cassandra-journal";

		private String seeds;

		private String initialToken = "0";

		private Duration ringDelay = Duration.ofSeconds(1);

		private Path javaHome;

		private int processors;

		Builder() {
		}

		/**
		 * @param host the loopback address to listen on, default {@code 127.0.0.1}
		 * @return this builder
		 */
		public Builder host(String host) {
			this.host = Objects.requireNonNull(host, "host");
			return this;
		}

		/**
		 * @param port the CQL port; 0 (the default) picks a free one, kept across restarts
		 * @return this builder
		 */
		public Builder nativePort(int port) {
			this.nativePort = checkPort(port, "nativePort");
			return this;
		}

		/**
		 * @param port the internode port; 0 (the default) picks a free one
		 * @return this builder
		 */
		public Builder storagePort(int port) {
			this.storagePort = checkPort(port, "storagePort");
			return this;
		}

		/**
		 * Keeps the node's data in the given directory across runs (it is created if missing and never
		 * wiped). Without it, the node uses a temporary directory that is deleted on {@link #close()}.
		 * @param directory the persistent directory
		 * @return this builder
		 */
		public Builder persistentDirectory(Path directory) {
			this.directory = Objects.requireNonNull(directory, "directory");
			return this;
		}

		/**
		 * @param maxHeap the {@code -Xmx} of the node, such as {@code 512m} or {@code 1g}; the RSS is about
		 * 0.4 GB above it
		 * @return this builder
		 */
		public Builder maxHeap(String maxHeap) {
			this.maxHeap = checkSize(maxHeap, "maxHeap");
			return this;
		}

		/**
		 * @param initialHeap the {@code -Xms}, default {@code 256m}. Keep it small: Cassandra locks its heap
		 * in memory when run as root
		 * @return this builder
		 */
		public Builder initialHeap(String initialHeap) {
			this.initialHeap = checkSize(initialHeap, "initialHeap");
			return this;
		}

		/**
		 * @param mode how the commit log is synced, default {@link CommitLogMode#PERIODIC}
		 * @return this builder
		 */
		public Builder commitLogMode(CommitLogMode mode) {
			this.commitLogMode = Objects.requireNonNull(mode, "mode");
			return this;
		}

		/**
		 * @param timeout how long {@link CassandraNode#start()} waits for CQL, default 2 minutes
		 * @return this builder
		 */
		public Builder startupTimeout(Duration timeout) {
			this.startupTimeout = Objects.requireNonNull(timeout, "timeout");
			return this;
		}

		/**
		 * @param enabled whether to use {@code PasswordAuthenticator} (superuser {@code cassandra} /
		 * {@code cassandra}); default off
		 * @return this builder
		 */
		public Builder passwordAuthentication(boolean enabled) {
			this.passwordAuthentication = enabled;
			return this;
		}

		/**
		 * Turns on TLS for client connections (the native transport accepts nothing else).
		 * @param keystore a JKS keystore with the node's private key and certificate
		 * @param password its password (also the key's)
		 * @return this builder
		 */
		public Builder clientEncryption(Path keystore, String password) {
			this.clientEncryption = new NodeSpec.ClientEncryption(Objects.requireNonNull(keystore, "keystore"),
					Objects.requireNonNull(password, "password"));
			return this;
		}

		/**
		 * Whether the node flushes its schema tables to disk after every schema change (Cassandra's
		 * {@code cassandra.test.flush_local_schema_changes}; default on). Off, each {@code CREATE} and {@code DROP}
		 * is cheaper, and the schema is still in the commit log and flushed by a graceful stop; but a node killed
		 * (SIGKILL) after a schema change may restart without it. For test nodes that are never killed.
		 * @param flush whether to flush after each schema change
		 * @return this builder
		 */
		public Builder flushSchemaChanges(boolean flush) {
			this.flushSchemaChanges = flush;
			return this;
		}

		/**
		 * @param javaHome a JDK 11 or 17 to run the node with; default: {@code CASSANDRA_JAVA_HOME}, else
		 * the running JDK when it is 11 or 17
		 * @return this builder
		 */
		public Builder javaHome(Path javaHome) {
			this.javaHome = Objects.requireNonNull(javaHome, "javaHome");
			return this;
		}

		/**
		 * Sizes the node's thread pools for this many cores ({@code -XX:ActiveProcessorCount}), for a node that
		 * is given fewer cores than its machine has (by {@code taskset} or a cgroup the JVM does not see):
		 * Cassandra's request executors spin while they wait for work, which on fewer cores than they were
		 * sized for takes the time the work needs.
		 * @param processors at least 1; default: what the node's JVM sees
		 * @return this builder
		 */
		public Builder processors(int processors) {
			if (processors < 1) {
				throw new IllegalArgumentException("processors must be at least 1, was " + processors);
			}
			this.processors = processors;
			return this;
		}

		Builder clusterMember(String clusterName, String seeds, String initialToken, Duration ringDelay) {
			this.clusterName = clusterName;
			this.seeds = seeds;
			this.initialToken = initialToken;
			this.ringDelay = ringDelay;
			return this;
		}

		/** @return a node, not yet started; free ports are chosen now */
		public CassandraNode build() {
			return new CassandraNode(toSpec(this.directory == null, this.directory));
		}

		CassandraNode buildTemporaryIn(Path directory) {
			return new CassandraNode(toSpec(true, directory));
		}

		NodeSpec toSpec(boolean temporary, Path dir) {
			List<String> hosts = List.of(this.host);
			int nativePortResolved = (this.nativePort != 0) ? this.nativePort : Ports.freePort(hosts);
			int storagePortResolved = (this.storagePort != 0) ? this.storagePort : Ports.freePort(hosts);
			Path resolvedDir = (dir != null) ? dir : NodeDirectories.newTemporary("node-");
			String resolvedSeeds = (this.seeds != null) ? this.seeds : this.host + ":" + storagePortResolved;
			Path java = (this.javaHome != null) ? this.javaHome.resolve("bin").resolve("java")
					: JavaRuntime.resolveJavaExecutable();
			return new NodeSpec(this.clusterName, this.host, nativePortResolved, storagePortResolved, resolvedSeeds,
					this.initialToken, resolvedDir.toAbsolutePath(), temporary, this.initialHeap, this.maxHeap,
					this.commitLogMode, this.ringDelay, this.passwordAuthentication, this.startupTimeout, java,
					this.clientEncryption, this.flushSchemaChanges, this.processors);
		}

		private static int checkPort(int port, String name) {
			if (port < 0 || port > 65535) {
				throw new IllegalArgumentException(name + " must be between 0 and 65535, was " + port);
			}
			return port;
		}

		private static String checkSize(String size, String name) {
			if (size == null || !size.matches("[0-9]+[kKmMgG]?")) {
				throw new IllegalArgumentException(name + " must look like 512m or 1g, was '" + size + "'");
			}
			return size;
		}

	}

}
