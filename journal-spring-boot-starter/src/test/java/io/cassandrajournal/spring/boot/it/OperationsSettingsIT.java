package io.cassandrajournal.spring.boot.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.json.JsonMapper;

import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.spring.boot.projection.TestEvents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The settings README "Operations" names for health details and Prometheus (with micrometer-registry-prometheus
 * and the actuator on the classpath) produce them, exactly these and nothing else: the journal's and the
 * projections' details, the projections' last handled events, and the journal's meters.
 */
@SpringBootTest(classes = StarterTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=health,prometheus",
				"management.endpoint.health.show-details=always" })
class OperationsSettingsIT {

	@DynamicPropertySource
	static void cassandra(DynamicPropertyRegistry registry) {
		SharedCassandraProperties.register(registry, "operations");
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Journal journal;

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	@SuppressWarnings("unchecked")
	void theDocumentedSettingsGiveHealthDetailsAndPrometheusMeters() throws Exception {
		this.journal.append("starter-acct-1", 0, List.of(EventToAppend.of(new TestEvents.Deposited(10), "starter")))
			.toCompletableFuture()
			.join();
		// Bound: the projection is woken by the append; 20 s allows for a loaded machine.
		await().atMost(Duration.ofSeconds(20)).until(() -> lastHandled(health()) != null);

		Map<String, Object> health = health();
		Map<String, Object> journal = component(health, "journal");
		assertThat(journal).containsEntry("status", "UP");
		assertThat((Map<String, Object>) journal.get("details")).containsKey("keyspace");
		assertThat(lastHandled(health)).containsEntry("persistenceId", "starter-acct-1").containsEntry("sequenceNr", 1);
		assertThat(projection(health).get("resumesFrom")).asString().startsWith("after starter-acct-1 #1");

		HttpResponse<String> prometheus = get("/actuator/prometheus");
		assertThat(prometheus.statusCode()).isEqualTo(200);
		assertThat(prometheus.body()).contains("journal_appends_seconds_count", "journal_events_appended_total",
				"persistence_projection_events_handled_total");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> component(Map<String, Object> health, String name) {
		return (Map<String, Object>) ((Map<String, Object>) health.get("components")).get(name);
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> projection(Map<String, Object> health) {
		Map<String, Object> details = (Map<String, Object>) component(health, "projections").get("details");
		return (Map<String, Object>) ((Map<String, Object>) details.get("projections")).get("by-pid");
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> lastHandled(Map<String, Object> health) {
		return (Map<String, Object>) projection(health).get("lastHandledEvent");
	}

	@SuppressWarnings("unchecked")
	private Map<String, Object> health() throws Exception {
		return JsonMapper.builder().build().readValue(get("/actuator/health").body(), Map.class);
	}

	private HttpResponse<String> get(String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

}
