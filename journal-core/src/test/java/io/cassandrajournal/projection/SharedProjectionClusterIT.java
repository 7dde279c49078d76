package io.cassandrajournal.projection;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.launcher.CassandraCluster;
import io.cassandrajournal.launcher.CommitLogMode;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testsupport.TestKeyspace;
import io.cassandrajournal.testsupport.TestSessions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link SharedProjectionMultiJvmIT} on a 3-node cluster of its own with replication factor 3 (the journal at its
 * default LOCAL_QUORUM): the three application JVMs, one SIGKILLed every 20 s and restarted, one SIGSTOPped past its
 * lease, and besides them two Cassandra nodes stopped and restarted ({@link ClusterNodeStops}: a SIGKILL of the
 * preferred coordinator a quarter into the run, a graceful stop of the then preferred coordinator at three fifths),
 * each down 15 s. The same correctness assertions: read model equal to the fold of the journal, cursors fenced and
 * never moving back, duplicates bounded by one batch per takeover from a dead owner; and at least one node stop
 * made. The load checks (kills made, events appended) are half the single node's: takeovers are slower here. Tagged
 * {@code cluster}: {@code ./mvnw -Pcluster-tests verify -pl journal-core -am -Dit.test=SharedProjectionClusterIT}
 * ({@code -Dshared.duration=S}, default 180).
 * <p>
 * The nodes sync their commit log before acknowledging a write ({@link CommitLogMode#BATCH_SKIP_SYNC}), as in the
 * cluster fault run, so a SIGKILLed node keeps what it acknowledged.
 */
@Tag("cluster")
class SharedProjectionClusterIT {

	private static final String KEYSPACE = "shared_cluster";

	@Test
	void instancesAndNodesKilledOnAClusterKeepCursorsFencedAndTheReadModelEqualToTheJournal() throws Exception {
		Duration duration = Duration.ofSeconds(Long.getLong("shared.duration", 180));
		try (CassandraCluster cluster = CassandraCluster.builder()
			.size(3)
			.maxHeap("512m")
			.commitLogMode(CommitLogMode.BATCH_SKIP_SYNC)
			.startupTimeout(Duration.ofMinutes(3))
			.build()) {
			cluster.start();
			try (CqlSession admin = TestSessions.open(cluster.contactPoints(), cluster.datacenter(), null)) {
				admin.execute("CREATE KEYSPACE " + KEYSPACE
						+ " WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 3}");
				// Bound: DDL reaches the other nodes by gossip, slow with three nodes on 2 cores.
				await("schema agreement").atMost(Duration.ofSeconds(60)).until(admin::checkSchemaAgreement);
			}
			// DDL waits for every node to agree (the driver's 10 s default is too short for 3 nodes on 2 cores).
			CqlSession session = CqlSession.builder()
				.addContactPoints(cluster.contactPoints())
				.withLocalDatacenter(cluster.datacenter())
				.withKeyspace(KEYSPACE)
				.withConfigLoader(TestSessions.testConfig()
					.withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofSeconds(60))
					.build())
				.build();
			try (TestKeyspace keyspace = new TestKeyspace(KEYSPACE, session, cluster.contactPoints(),
					cluster.datacenter())) {
				createTables(session);
				String leases = SharedProjectionRun.options(KEYSPACE).durableStateTable() + "_leases";
				SimpleStatement leaseRead = SimpleStatement
					.newInstance("SELECT owner FROM " + leases + " WHERE projection = ? AND segment = ?",
							SharedProjectionRun.PROJECTION, SliceRange.split(SharedProjectionRun.SEGMENTS).get(0).key())
					.setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM);
				ClusterNodeStops stops = new ClusterNodeStops(cluster.nodes(), session, () -> {
					try {
						return session.execute(leaseRead).getExecutionInfo().getCoordinator();
					}
					catch (RuntimeException ex) {
						return null;
					}
				});
				Path work = SharedProjectionRun.workDirectory();
				SharedProjectionRun.Report report = SharedProjectionRun.run(keyspace, duration, work, stops);
				// The load checks are halved: each kill waits for the previous one's takeover, which took 12 to 27 s
				// here (three nodes, a node restart of about 80 s, three instances and the test on 2 cores), so the
				// 20 s schedule slips (7 kills in 180 s in the run of 14:26 UTC), and appends ran at about 8 a second.
				// The correctness checks are the same.
				SharedProjectionMultiJvmIT.assertRunHolds(report, (int) (duration.toSeconds() / 40),
						duration.toSeconds() * 5);
				assertThat(report.nodeStops()).as("Cassandra nodes stopped").isPositive();
			}
		}
	}

	/**
	 * Creates every table of the run, each until every node knows it: on 3 nodes on 2 cores a statement prepared
	 * right after its table was created can reach a node that does not know the table yet.
	 */
	private static void createTables(CqlSession session) {
		CassandraJournalOptions options = SharedProjectionRun.options(KEYSPACE);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		List<Runnable> creates = List.of(() -> CassandraJournal.create(session, options, serializer),
				() -> CassandraDurableStateStore.create(session, options, serializer),
				() -> LeaseTable.create(session, options), () -> MemberTable.create(session, options),
				() -> SharedProjectionRun.createReadModel(session));
		for (Runnable create : creates) {
			// Bound: as for the keyspace, per table.
			await("tables created and known to every node").atMost(Duration.ofMinutes(2))
				.pollInterval(Duration.ofSeconds(1))
				.ignoreExceptions()
				.until(() -> {
					create.run();
					return session.checkSchemaAgreement();
				});
		}
	}

}
