package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.launcher.CassandraNode;

import static org.awaitility.Awaitility.await;

/**
 * Cassandra node stops during a {@link SharedProjectionRun} on a cluster, at fixed points of the run: a
 * {@code SIGKILL} at a quarter of it and a graceful stop ({@code SIGTERM}, the node drains) at three fifths, each of
 * the preferred coordinator (the node that coordinated the test's latest read of a lease row), each down for
 * {@link #OUTAGE} and then started again on its data; the next only once the driver sees every node up (a node
 * start took 81 s here with everything else running), and none whose outage would end less than
 * {@link #QUIET_END} before the run does (a restart may go on after the run's kills end: {@link #finish()} waits
 * for it). Runs in a thread of its own.
 */
final class ClusterNodeStops {

	static final Duration OUTAGE = Duration.ofSeconds(15);

	/** Time with every node up before the run's kills end, at the least. */
	static final Duration QUIET_END = Duration.ofSeconds(15);

	private final List<CassandraNode> nodes;

	private final CqlSession session;

	private final Supplier<@Nullable Node> coordinator;

	private final List<String> log = new ArrayList<>();

	private int kills;

	private int stops;

	private int onCoordinator;

	private volatile boolean cancelled;

	private @Nullable Thread thread;

	private volatile @Nullable Throwable failure;

	/**
	 * @param nodes the cluster's nodes
	 * @param session the session whose view of the nodes decides when a restarted node is back
	 * @param coordinator the node that coordinated the latest read of a lease row
	 */
	ClusterNodeStops(List<CassandraNode> nodes, CqlSession session, Supplier<@Nullable Node> coordinator) {
		this.nodes = List.copyOf(nodes);
		this.session = session;
		this.coordinator = coordinator;
	}

	/**
	 * Starts the schedule.
	 * @param begin the run's start ({@link System#nanoTime()})
	 * @param end the run's end
	 */
	void start(long begin, long end) {
		Thread running = new Thread(() -> {
			try {
				stop(begin, begin + (end - begin) / 4, true, end);
				stop(begin, begin + (end - begin) * 3 / 5, false, end);
			}
			catch (Throwable ex) {
				this.failure = ex;
			}
		}, "cluster-node-stops");
		running.setDaemon(true);
		this.thread = running;
		running.start();
	}

	private void stop(long begin, long at, boolean kill, long end) {
		// The schedule (a point of the run, then the outage), not a wait for a condition.
		parkUntil(at);
		if (this.cancelled || System.nanoTime() + OUTAGE.toNanos() + QUIET_END.toNanos() > end) {
			record(begin, (kill ? "SIGKILL" : "graceful stop") + " left out: too close to the end of the run");
			return;
		}
		int preferred = indexOf(this.coordinator.get());
		int victim = (preferred >= 0) ? preferred : this.nodes.size() - 1;
		CassandraNode node = this.nodes.get(victim);
		long down = System.nanoTime();
		if (kill) {
			node.kill();
		}
		else {
			node.stop();
		}
		synchronized (this) {
			this.kills += kill ? 1 : 0;
			this.stops += kill ? 0 : 1;
			this.onCoordinator += (preferred >= 0) ? 1 : 0;
		}
		record(begin, String.format("%s node %d (%s), %s", kill ? "SIGKILL" : "graceful stop", victim, node.host(),
				(preferred >= 0) ? "the preferred coordinator" : "no coordinator known: the last node"));
		parkUntil(System.nanoTime() + OUTAGE.toNanos());
		if (this.cancelled) {
			return;
		}
		node.start();
		awaitAllUp();
		record(begin, String.format("node %d back, %.1f s after it went down", victim, (System.nanoTime() - down) / 1e9));
	}

	/** @return the index of the cluster node the driver's node is, or -1 */
	private int indexOf(@Nullable Node node) {
		if (node != null) {
			String address = node.getEndPoint().resolve().toString();
			for (int i = 0; i < this.nodes.size(); i++) {
				if (address.contains(this.nodes.get(i).host() + ":")) {
					return i;
				}
			}
		}
		return -1;
	}

	/** Waits until the driver sees every node up, so that the next stop leaves a quorum. */
	private void awaitAllUp() {
		// Bound: a node start on a loaded 2-core machine, then gossip and the driver's reconnection.
		await("every node up in the driver's view").atMost(Duration.ofSeconds(180))
			.pollInterval(Duration.ofMillis(250))
			.until(() -> this.session.getMetadata()
				.getNodes()
				.values()
				.stream()
				.allMatch((n) -> n.getState() == NodeState.UP));
	}

	private static void parkUntil(long deadline) {
		while (System.nanoTime() < deadline) {
			LockSupport.parkNanos(deadline - System.nanoTime());
		}
	}

	private synchronized void record(long begin, String line) {
		String entry = String.format("  %5.1f s: %s", (System.nanoTime() - begin) / 1e9, line);
		this.log.add(entry);
		System.out.println("node stops:" + entry);
	}

	/**
	 * Waits for the schedule to end (it ends by itself before the run does), then makes sure every node runs.
	 * @throws InterruptedException if interrupted
	 */
	void finish() throws InterruptedException {
		Thread running = this.thread;
		if (running != null) {
			running.join(Duration.ofMinutes(5).toMillis());
		}
		for (CassandraNode node : this.nodes) {
			node.start();
		}
		awaitAllUp();
		Throwable failed = this.failure;
		if (failed != null) {
			throw new IllegalStateException("The node stop schedule failed: " + failed, failed);
		}
	}

	/** Makes the schedule stop at its next step (a run that failed). */
	void cancel() {
		this.cancelled = true;
	}

	/** @return the stops as they happened, one line each */
	synchronized List<String> log() {
		return List.copyOf(this.log);
	}

	/** @return the stops made: SIGKILLs, graceful stops */
	synchronized String summary() {
		return "Cassandra node stops: " + this.kills + " SIGKILL, " + this.stops + " graceful, " + this.onCoordinator
				+ " of them of the preferred coordinator";
	}

	synchronized int made() {
		return this.kills + this.stops;
	}

}
