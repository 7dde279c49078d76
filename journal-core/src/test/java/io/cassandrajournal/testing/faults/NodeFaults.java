package io.cassandrajournal.testing.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Supplier;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.metadata.NodeState;
import org.awaitility.Awaitility;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.launcher.CassandraNode;

/**
 * Node faults for a {@link FaultRun}: from a seed, at random times, one node is killed with {@code SIGKILL} or
 * stopped gracefully ({@code SIGTERM}, Cassandra drains), stays down for a random while, and is started again on
 * the same data; never more than one node at a time. On a cluster the victim is, every other time, the node
 * that coordinated the driver's latest request on a contended entity (the coordinator the driver prefers for it),
 * otherwise a random node.
 * <p>
 * A seed fixes when each fault happens (relative to the start), its kind, its outage and its victim choice; how
 * long a node takes to stop and start is the machine's.
 */
public final class NodeFaults {

	/** A node fault. */
	public enum Kind {

		/** The node's JVM is killed with {@code SIGKILL}: unflushed memtables are lost, the commit log replays. */
		SIGKILL,
		/** The node is stopped with {@code SIGTERM} and drains before it exits. */
		GRACEFUL_STOP

	}

	private final List<CassandraNode> nodes;

	private final long seed;

	private final Duration firstAfter;

	private final Duration meanGap;

	private final Duration maxOutage;

	private final Map<Kind, Long> injected = new EnumMap<>(Kind.class);

	private final List<String> log = new ArrayList<>();

	private @Nullable Supplier<@Nullable Node> coordinator;

	private @Nullable CqlSession session;

	private @Nullable Thread thread;

	private volatile @Nullable Throwable failure;

	private long coordinatorKills;

	private long downMillis;

	/**
	 * @param nodes the nodes that may be killed (each started, on its own data)
	 * @param seed decides the schedule
	 * @param firstAfter earliest first fault after the clients start
	 * @param meanGap mean time between a node's restart and the next fault (uniform from half to one and a half)
	 * @param maxOutage the longest a killed node stays down before it is started again
	 */
	public NodeFaults(List<CassandraNode> nodes, long seed, Duration firstAfter, Duration meanGap, Duration maxOutage) {
		this.nodes = List.copyOf(nodes);
		this.seed = seed;
		this.firstAfter = firstAfter;
		this.meanGap = meanGap;
		this.maxOutage = maxOutage;
	}

	/**
	 * @param session the session whose view of the nodes decides when a restarted node is back (all nodes up)
	 * @param coordinator the node that coordinated the driver's latest request on a contended entity
	 * @return this
	 */
	public NodeFaults watching(CqlSession session, Supplier<@Nullable Node> coordinator) {
		this.session = session;
		this.coordinator = coordinator;
		return this;
	}

	/**
	 * Starts the schedule in its own thread.
	 * @param deadlineNanos no fault starts after this {@link System#nanoTime()}
	 */
	public void start(long deadlineNanos) {
		Thread running = new Thread(() -> {
			try {
				schedule(deadlineNanos);
			}
			catch (Throwable ex) {
				this.failure = ex;
			}
		}, "node-faults");
		running.setDaemon(true);
		this.thread = running;
		running.start();
	}

	private void schedule(long deadlineNanos) throws InterruptedException {
		SplittableRandom random = new SplittableRandom(this.seed ^ 0x6e6f64654b696c6cL);
		long start = System.nanoTime();
		long next = start + this.firstAfter.toNanos() + gap(random) / 2;
		// Kinds alternate from a seeded first one, so that two faults make one of each.
		boolean killFirst = random.nextBoolean();
		for (int made = 0;; made++) {
			long wait = next - System.nanoTime();
			if (wait > 0) {
				Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
			}
			// Leave room for the outage and the restart before the clients stop.
			if (System.nanoTime() + this.maxOutage.toNanos() >= deadlineNanos) {
				return;
			}
			Kind kind = ((made % 2 == 0) == killFirst) ? Kind.SIGKILL : Kind.GRACEFUL_STOP;
			long outage = random.nextLong(this.maxOutage.toMillis() + 1);
			boolean preferCoordinator = random.nextBoolean();
			int victimIndex = victim(random.nextInt(this.nodes.size()), preferCoordinator);
			CassandraNode victim = this.nodes.get(victimIndex);
			long down = System.nanoTime();
			record(String.format("t=%.1fs %s node %d (%s)%s, down for %d ms", (down - start) / 1e9, kind, victimIndex,
					victim.host(), (preferCoordinator && this.nodes.size() > 1) ? ", the preferred coordinator" : "",
					outage));
			if (kind == Kind.SIGKILL) {
				victim.kill();
			}
			else {
				victim.stop();
			}
			synchronized (this) {
				this.injected.merge(kind, 1L, Long::sum);
			}
			Thread.sleep(outage);
			victim.start();
			awaitAllUp();
			long up = System.nanoTime();
			synchronized (this) {
				this.downMillis += (up - down) / 1_000_000;
			}
			record(String.format("t=%.1fs node %d back after %.1f s", (up - start) / 1e9, victimIndex, (up - down) / 1e9));
			next = up + gap(random);
		}
	}

	private int victim(int random, boolean preferCoordinator) {
		if (!preferCoordinator || this.nodes.size() == 1 || this.coordinator == null) {
			return random;
		}
		Node node = this.coordinator.get();
		if (node != null) {
			String host = node.getEndPoint().resolve().toString();
			for (int i = 0; i < this.nodes.size(); i++) {
				if (host.contains(this.nodes.get(i).host() + ":")) {
					synchronized (this) {
						this.coordinatorKills++;
					}
					return i;
				}
			}
		}
		return random;
	}

	private long gap(SplittableRandom random) {
		long mean = this.meanGap.toNanos();
		return mean / 2 + random.nextLong(mean + 1);
	}

	/** On a cluster, waits until the driver sees every node up again, so that the next fault leaves a quorum. */
	private void awaitAllUp() {
		CqlSession watched = this.session;
		if (watched == null || this.nodes.size() == 1) {
			return;
		}
		Awaitility.await("every node up in the driver's view")
			.atMost(Duration.ofSeconds(90))
			.pollInterval(Duration.ofMillis(250))
			.until(() -> watched.getMetadata().getNodes().values().stream().allMatch((n) -> n.getState() == NodeState.UP));
	}

	private synchronized void record(String line) {
		this.log.add(line);
		System.out.println("node faults: " + line);
	}

	/**
	 * Waits for the schedule to end (it ends by itself before the deadline) and makes sure every node runs.
	 * @throws InterruptedException if interrupted
	 */
	public void finish() throws InterruptedException {
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
			throw new IllegalStateException("The node fault schedule failed: " + failed, failed);
		}
	}

	/** @return faults made, by kind */
	public synchronized Map<Kind, Long> injected() {
		return new EnumMap<>(this.injected);
	}

	/** @return the schedule as it happened, one line per stop and restart */
	public synchronized List<String> log() {
		return List.copyOf(this.log);
	}

	/** @return one line for the run's summary */
	public synchronized String summary() {
		return "node faults: " + this.injected + ", " + this.coordinatorKills + " of them on the preferred coordinator, "
				+ String.format("%.1f s down in all", this.downMillis / 1e3);
	}

}
