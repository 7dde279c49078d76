package io.cassandrajournal.sample;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.ActiveProfiles;
import tools.jackson.databind.json.JsonMapper;

import io.cassandrajournal.launcher.CassandraCluster;
import io.cassandrajournal.spring.boot.embedded.EmbeddedCassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code local-cluster} profile as the README runs it: the sample starts a 3-node cluster of its own,
 * creates its keyspace with replication factor 3, and keeps taking deposits (LOCAL_QUORUM / LOCAL_SERIAL) and
 * updating its read model after one node is killed with SIGKILL.
 */
@Tag("cluster")
@ActiveProfiles("local-cluster")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class LocalClusterProfileIT {

	@LocalServerPort
	private int port;

	@Autowired
	private CqlSession session;

	private final HttpClient client = HttpClient.newHttpClient();

	@Test
	void depositsAndTheReadModelGoOnAfterANodeIsKilled() throws Exception {
		CassandraCluster cluster = EmbeddedCassandra.cluster();
		assertThat(cluster).as("the profile started a local cluster").isNotNull();
		assertThat(cluster.nodes()).hasSize(3);
		assertThat(this.session.getMetadata().getNodes()).hasSize(3);
		assertThat(this.session.execute("SELECT replication FROM system_schema.keyspaces WHERE keyspace_name = 'bank'")
			.one()
			.getMap(0, String.class, String.class)).containsEntry("replication_factor", "3");

		assertThat(post("/accounts/cluster-1", "").statusCode()).isEqualTo(201);
		for (int i = 0; i < 5; i++) {
			assertThat(post("/accounts/cluster-1/deposits", "{\"amount\": 10}").statusCode()).isEqualTo(200);
		}
		cluster.node(2).kill();
		// Bound: the driver marks the dead node down within seconds; every deposit must succeed meanwhile or be
		// answered 503 (retry-safe, or uncertain: a 503 may stand for an append that was applied), never another
		// status. 90 s for ten accepted deposits.
		int accepted = 5;
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
		while (accepted < 15 && System.nanoTime() < deadline) {
			int status = post("/accounts/cluster-1/deposits", "{\"amount\": 10}").statusCode();
			assertThat(status).as("a deposit while a node is down").isIn(200, 503);
			if (status == 200) {
				accepted++;
			}
		}
		assertThat(accepted).as("ten deposits accepted with one node of three down").isEqualTo(15);
		// The test's own read may still be routed to the dead node until the driver marks it down: retried, 60 s.
		long[] stored = new long[1];
		await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).ignoreExceptions()
			.until(() -> (stored[0] = deposited("account-cluster-1")) >= 0);
		long deposits = stored[0];
		assertThat(deposits).as("every accepted deposit is in the journal (an uncertain 503 may add more)")
			.isGreaterThanOrEqualTo(accepted);
		// Bound: the balances projection polls every second; 60 s covers its catch-up after the node loss.
		await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
			.until(() -> balance("cluster-1") == deposits * 10);
	}

	/** Deposits of an account as stored in the journal (read at LOCAL_QUORUM, the profile's consistency). */
	private long deposited(String persistenceId) {
		return this.session.execute(SimpleStatement
			.newInstance("SELECT payload FROM bank.events WHERE persistence_id = ? AND partition_nr = 0", persistenceId)
			.setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM)
			.setTimeout(Duration.ofSeconds(10)))
			.all()
			.stream()
			.filter((row) -> row.getString(0).contains("\"kind\":\"deposited\""))
			.count();
	}

	private long balance(String account) throws Exception {
		HttpResponse<String> response = get("/accounts/" + account);
		if (response.statusCode() != 200) {
			return -1;
		}
		return JsonMapper.builder().build().readTree(response.body()).get("balance").asLong();
	}

	private HttpResponse<String> post(String path, String body) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> get(String path) throws Exception {
		return this.client.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
