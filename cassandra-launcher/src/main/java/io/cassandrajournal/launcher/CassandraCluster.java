package io.cassandrajournal.launcher;

import java.io.IOException;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

import io.cassandrajournal.launcher.internal.NodeDirectories;
import io.cassandrajournal.launcher.internal.Ports;

/**
 * A cluster of N real Cassandra nodes on 127.0.0.1 .. 127.0.0.N, all on the same ports, seeded by the
 * first, with evenly spaced single tokens. Nodes are started one after another: started in parallel they
 * fail to gossip. About 18 s and 750 MB of RSS per node for three nodes with 512 MB heaps.
 * <p>
 * Its directory is temporary and wiped on {@link #close()}; each node can be stopped, killed and
 * restarted on its own for fault tests.
 */
public final class CassandraCluster implements AutoCloseable {

	private final List<CassandraNode> nodes;

	private final Path directory;

	private CassandraCluster(List<CassandraNode> nodes, Path directory) {
		this.nodes = Collections.unmodifiableList(nodes);
		this.directory = directory;
	}

	/** @return a builder for a 3-node cluster with 512 MB heaps */
	public static Builder builder() {
		return new Builder();
	}

	/** Starts every node that is not running, in order, each until it answers CQL. */
	public void start() {
		for (CassandraNode node : this.nodes) {
			node.start();
		}
	}

	/** @return the nodes, in address order (node 0 is 127.0.0.1, the seed) */
	public List<CassandraNode> nodes() {
		return this.nodes;
	}

	/**
	 * @param index 0-based node index
	 * @return the node
	 */
	public CassandraNode node(int index) {
		return this.nodes.get(index);
	}

	/** @return every node's contact point */
	public List<InetSocketAddress> contactPoints() {
		return this.nodes.stream().map(CassandraNode::contactPoint).toList();
	}

	/** @return the data center of every node, {@code datacenter1} */
	public String datacenter() {
		return "datacenter1";
	}

	/** Kills every node (they are temporary) and wipes the cluster's directory. */
	@Override
	public void close() {
		RuntimeException failure = null;
		for (CassandraNode node : this.nodes) {
			try {
				node.close();
			}
			catch (RuntimeException ex) {
				failure = (failure == null) ? ex : failure;
			}
		}
		try {
			NodeDirectories.delete(this.directory);
		}
		catch (IOException ex) {
			// nodes are gone; a later sweep removes the rest
		}
		if (failure != null) {
			throw failure;
		}
	}

	/** Builds a {@link CassandraCluster}. */
	public static final class Builder {

		private int size = 3;

		private String maxHeap = "512m";

		private CommitLogMode commitLogMode = CommitLogMode.PERIODIC;

		private Duration startupTimeout = Duration.ofMinutes(2);

		Builder() {
		}

		/**
		 * @param size the number of nodes, 1 to 9; default 3
		 * @return this builder
		 */
		public Builder size(int size) {
			if (size < 1 || size > 9) {
				throw new IllegalArgumentException("size must be between 1 and 9, was " + size);
			}
			this.size = size;
			return this;
		}

		/**
		 * @param maxHeap each node's {@code -Xmx}, default {@code 512m}
		 * @return this builder
		 */
		public Builder maxHeap(String maxHeap) {
			this.maxHeap = Objects.requireNonNull(maxHeap, "maxHeap");
			return this;
		}

		/**
		 * @param mode each node's commit-log mode, default {@link CommitLogMode#PERIODIC}
		 * @return this builder
		 */
		public Builder commitLogMode(CommitLogMode mode) {
			this.commitLogMode = Objects.requireNonNull(mode, "mode");
			return this;
		}

		/**
		 * @param timeout how long each node may take to answer CQL
		 * @return this builder
		 */
		public Builder startupTimeout(Duration timeout) {
			this.startupTimeout = Objects.requireNonNull(timeout, "timeout");
			return this;
		}

		/** @return the cluster, not yet started; ports are chosen now */
		public CassandraCluster build() {
			List<String> hosts = new ArrayList<>();
			for (int i = 1; i <= this.size; i++) {
				hosts.add("127.0.0." + i);
			}
			int nativePort = Ports.freePort(hosts);
			int storagePort = Ports.freePort(hosts);
			Path root = NodeDirectories.newTemporary("cluster-");
			List<CassandraNode> nodes = new ArrayList<>();
			for (int i = 0; i < this.size; i++) {
				Path dir = root.resolve("node" + (i + 1));
				try {
					Files.createDirectories(dir);
				}
				catch (IOException ex) {
					throw new CassandraLaunchException("Cannot create " + dir, ex);
				}
				nodes.add(CassandraNode.builder()
					.host(hosts.get(i))
					.nativePort(nativePort)
					.storagePort(storagePort)
					.maxHeap(this.maxHeap)
					.commitLogMode(this.commitLogMode)
					.startupTimeout(this.startupTimeout)
					.clusterMember("cassandra-journal-cluster", hosts.get(0) + ":" + storagePort, token(i, this.size),
							Duration.ofMillis((i == 0) ? 1000 : 5000))
					.buildTemporaryIn(dir));
			}
			return new CassandraCluster(nodes, root);
		}

		static String token(int index, int size) {
			BigInteger range = BigInteger.TWO.pow(64);
			BigInteger min = BigInteger.valueOf(Long.MIN_VALUE);
			return min.add(range.divide(BigInteger.valueOf(size)).multiply(BigInteger.valueOf(index))).toString();
		}

	}

}
