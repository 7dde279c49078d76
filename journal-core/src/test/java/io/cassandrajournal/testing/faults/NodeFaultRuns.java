package io.cassandrajournal.testing.faults;

import java.time.Duration;
import java.util.List;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import org.awaitility.Awaitility;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.launcher.CassandraCluster;
import io.cassandrajournal.launcher.CassandraNode;
import io.cassandrajournal.launcher.CommitLogMode;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testsupport.TestSessions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Fault runs with node faults, each on nodes it starts itself (never the shared node): a single node, or a
 * 3-node cluster with replication factor 3 at LOCAL_QUORUM / LOCAL_SERIAL.
 * <p>
 * The nodes sync their commit log before acknowledging a write ({@link CommitLogMode#BATCH_SKIP_SYNC}): with
 * Cassandra's default periodic sync a write acknowledged in the last 10 s before a {@code SIGKILL} of a single
 * node is lost by design of that configuration, not by the journal, and the checker would report it.
 */
final class NodeFaultRuns {

	private NodeFaultRuns() {
	}

	/**
	 * Every rule holds, {@link HistoryChecker.Rule#UNKNOWN_TAG_INDEX_SPLIT} included (until finding 5 of
	 * docs/reliability.md was fixed, it was counted and not failed on here).
	 * @param report a run's report
	 */
	static void assertRulesHold(FaultRun.Report report) {
		assertThat(report.checked().violations()).as(report.summary())
			.allSatisfy((rule, count) -> assertThat(count).as(rule.name()).isZero());
	}

	/**
	 * @param settings the run
	 * @param meanGap mean time from a restart to the next node fault
	 * @param maxOutage the longest a node stays down
	 * @return the report
	 * @throws InterruptedException if interrupted
	 */
	static FaultRun.Report onOwnNode(FaultRun.Settings settings, Duration meanGap, Duration maxOutage)
			throws InterruptedException {
		try (CassandraNode node = CassandraNode.builder()
			.maxHeap("512m")
			.commitLogMode(CommitLogMode.BATCH_SKIP_SYNC)
			.build()) {
			node.start();
			String keyspace = "node_faults";
			try (CqlSession admin = TestSessions.open(List.of(node.contactPoint()), node.datacenter(), null)) {
				admin.execute("CREATE KEYSPACE " + keyspace
						+ " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
			}
			try (CqlSession session = TestSessions.open(List.of(node.contactPoint()), node.datacenter(), keyspace)) {
				FaultRun run = new FaultRun(session, keyspace, settings);
				NodeFaults faults = new NodeFaults(List.of(node), settings.seed(), Duration.ofSeconds(5), meanGap,
						maxOutage)
					.watching(session, () -> run.coordinatorOf(run.hotEntity(0)));
				return run.withNodeFaults(faults).run();
			}
		}
	}

	/**
	 * Creates the tables before the run, each until every node knows it: on 3 nodes on 2 cores a statement
	 * prepared right after its table was created can reach a node that does not know the table yet.
	 */
	private static void createTablesOn(CqlSession session, CassandraJournalOptions options) {
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		List<Runnable> creates = List.of(() -> CassandraJournal.create(session, options, serializer),
				() -> CassandraSnapshotStore.create(session, options, serializer),
				() -> CassandraDurableStateStore.create(session, options, serializer));
		for (Runnable create : creates) {
			Awaitility.await("tables created and known to every node")
				.atMost(Duration.ofMinutes(2))
				.pollInterval(Duration.ofSeconds(1))
				.ignoreExceptions()
				.until(() -> {
					create.run();
					return session.checkSchemaAgreement();
				});
		}
	}

	/**
	 * @param settings the run
	 * @param meanGap mean time from a restart (every node up again) to the next node fault
	 * @param maxOutage the longest a node stays down
	 * @return the report
	 * @throws InterruptedException if interrupted
	 */
	static FaultRun.Report onCluster(FaultRun.Settings settings, Duration meanGap, Duration maxOutage)
			throws InterruptedException {
		try (CassandraCluster cluster = CassandraCluster.builder()
			.size(3)
			.maxHeap("512m")
			.commitLogMode(CommitLogMode.BATCH_SKIP_SYNC)
			.startupTimeout(Duration.ofMinutes(3))
			.build()) {
			cluster.start();
			String keyspace = "cluster_faults";
			try (CqlSession admin = TestSessions.open(cluster.contactPoints(), cluster.datacenter(), null)) {
				admin.execute("CREATE KEYSPACE " + keyspace
						+ " WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 3}");
				Awaitility.await("schema agreement").atMost(Duration.ofSeconds(60)).until(admin::checkSchemaAgreement);
			}
			// DDL waits for every node to agree on the schema (the driver's 10 s default is too short for 3 nodes
			// on 2 cores: a statement prepared right after its table was created failed on another node).
			try (CqlSession session = CqlSession.builder()
				.addContactPoints(cluster.contactPoints())
				.withLocalDatacenter(cluster.datacenter())
				.withKeyspace(keyspace)
				.withConfigLoader(TestSessions.testConfig()
					.withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(60))
					.build())
				.build()) {
				FaultRun run = new FaultRun(session, keyspace, settings).withOptions((options) -> options
					.withConsistency(ConsistencyLevel.LOCAL_QUORUM)
					.withSerialConsistency(ConsistencyLevel.LOCAL_SERIAL)
					.withLocalDatacenter(cluster.datacenter()));
				createTablesOn(session, run.options());
				NodeFaults faults = new NodeFaults(cluster.nodes(), settings.seed(), Duration.ofSeconds(5), meanGap,
						maxOutage)
					.watching(session, () -> run.coordinatorOf(run.hotEntity(0)));
				return run.withNodeFaults(faults).run();
			}
		}
	}

}
