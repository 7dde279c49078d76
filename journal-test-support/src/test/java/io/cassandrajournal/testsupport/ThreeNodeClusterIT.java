package io.cassandrajournal.testsupport;

import java.time.Duration;
import java.util.List;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.launcher.CassandraCluster;
import io.cassandrajournal.launcher.CassandraNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A 3-node cluster with RF 3 keeps taking LOCAL_QUORUM writes and LOCAL_SERIAL LWTs while one node is
 * killed, and the node rejoins after a restart. Runs only with {@code -Pcluster-tests}.
 */
@Tag("cluster")
class ThreeNodeClusterIT {

	@Test
	void quorumWritesAndLwtsSurviveOneKilledNode() {
		CassandraCluster cluster = SharedCassandra.cluster();
		try (CqlSession session = TestSessions.open(cluster.contactPoints(), cluster.datacenter(), null)) {
			String ks = SharedCassandra.uniqueName("cluster");
			session.execute("CREATE KEYSPACE " + ks
					+ " WITH replication = {'class': 'NetworkTopologyStrategy', 'datacenter1': 3}");
			session.execute("CREATE TABLE " + ks + ".heads (id text PRIMARY KEY, seq bigint)");
			// DDL reaches the other nodes by gossip: wait until they agree before using the table.
			await().atMost(Duration.ofSeconds(60)).until(session::checkSchemaAgreement);
			PreparedStatement insert = session.prepare("INSERT INTO " + ks + ".heads (id, seq) VALUES (?, ?) IF NOT EXISTS");
			PreparedStatement update = session.prepare("UPDATE " + ks + ".heads SET seq = ? WHERE id = ? IF seq = ?");
			assertThat(session.getMetadata().getNodes()).hasSize(3);

			CassandraNode victim = cluster.node(2);
			victim.kill();
			assertThat(session.execute(insert.bind("a", 1L)
				.setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM)
				.setSerialConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL)).wasApplied()).isTrue();
			assertThat(session.execute(update.bind(2L, "a", 1L)
				.setConsistencyLevel(ConsistencyLevel.LOCAL_QUORUM)
				.setSerialConsistencyLevel(ConsistencyLevel.LOCAL_SERIAL)).wasApplied()).isTrue();

			victim.start();
			List<Long> seen = session.execute(session.prepare("SELECT seq FROM " + ks + ".heads WHERE id = ?")
				.bind("a")
				.setConsistencyLevel(ConsistencyLevel.ALL)).map((row) -> row.getLong(0)).all();
			assertThat(seen).containsExactly(2L);
		}
	}

}
