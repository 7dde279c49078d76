package io.cassandrajournal.spring.boot.it;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import tools.jackson.databind.json.JsonMapper;

import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.launcher.CassandraNode;
import io.cassandrajournal.spring.boot.projection.TestEvents;
import io.cassandrajournal.testsupport.SharedCassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The starter in a running application on a real node: annotated projections, health, Prometheus meters,
 * the projections endpoint (a reset while another runs answered with 409), and what happens when Cassandra goes
 * away and comes back.
 */
@SpringBootTest(classes = StarterTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "journal.cassandra.use-tag-index=true", "journal.cassandra.projections.poll-interval=300ms",
				"journal.cassandra.projections.retry-backoff=200ms", "journal.cassandra.projections.max-retry-backoff=1s",
				"journal.cassandra.projections.max-retries=100",
				"management.endpoints.web.exposure.include=health,prometheus,projections",
				"management.endpoint.health.show-details=always", "management.endpoint.projections.access=unrestricted",
				"spring.web.error.include-message=always" })
class JournalStarterIT {

	@DynamicPropertySource
	static void cassandra(DynamicPropertyRegistry registry) {
		SharedCassandraProperties.register(registry, "starter");
	}

	@LocalServerPort
	private int port;

	@Autowired
	private Journal journal;

	@Autowired
	private StarterTestApplication.Views views;

	private final HttpClient http = HttpClient.newHttpClient();

	private final JsonMapper json = JsonMapper.builder().build();

	@Test
	void projectionsHealthMetricsEndpointAndAnOutage() throws Exception {
		append("starter-acct-1", 0, new TestEvents.Deposited(10), new TestEvents.Withdrawn(3));
		append("starter-acct-2", 0, new TestEvents.Deposited(5));
		await().atMost(Duration.ofSeconds(20)).until(() -> this.views.byTag.size() == 3 && this.views.byPid.size() == 2);
		assertThat(this.views.byTag).contains("starter-acct-1#1+10", "-3", "starter-acct-2#1+5");
		assertThat(this.views.byPid).containsExactly(1L, 2L);

		Map<String, Object> health = get("/actuator/health");
		assertThat(health).containsEntry("status", "UP");
		assertThat(component(health, "journal")).containsEntry("status", "UP");
		assertThat(component(health, "projections")).containsEntry("status", "UP");

		String prometheus = getText("/actuator/prometheus");
		assertThat(prometheus).contains("journal_appends_seconds_count", "journal_events_appended_total",
				"persistence_projection_events_handled_total{projection=\"by-tag\"}", "persistence_projection_stalled",
				"persistence_projection_failures_total", "persistence_projection_events_skipped_total",
				"persistence_projection_handler_duration_seconds");

		Map<String, Object> list = get("/actuator/projections");
		assertThat((List<?>) list.get("projections")).hasSize(2);
		assertThat(post("/actuator/projections/by-tag/pause")).isEqualTo(200);
		assertThat(get("/actuator/projections/by-tag")).containsEntry("state", "PAUSED");
		assertThat(post("/actuator/projections/by-tag/resume")).isEqualTo(200);
		assertThat(post("/actuator/projections/by-tag/reset")).isEqualTo(200);
		await().atMost(Duration.ofSeconds(20)).until(() -> this.views.byTag.size() == 6);

		// Reset input the projection's source cannot resume from is refused with the reason; nothing changes.
		HttpResponse<String> byTimestamp = post("/actuator/projections/by-pid/reset", "{\"fromTimestamp\": 1}");
		assertThat(byTimestamp.statusCode()).isEqualTo(400);
		assertThat(byTimestamp.body()).contains("fromSequenceNr");
		HttpResponse<String> bySequenceNr = post("/actuator/projections/by-tag/reset", "{\"fromSequenceNr\": 1}");
		assertThat(bySequenceNr.statusCode()).isEqualTo(400);
		assertThat(bySequenceNr.body()).contains("fromTimestamp");
		assertThat(get("/actuator/projections/by-pid")).containsEntry("state", "RUNNING");

		// Cassandra goes away: health turns DOWN, appends fail with a clear error; it comes back and the
		// projections catch up with what was appended just before.
		append("starter-acct-1", 2, new TestEvents.Deposited(100));
		CassandraNode node = SharedCassandra.node();
		node.stop();
		try {
			await().atMost(Duration.ofSeconds(30)).until(() -> !"UP".equals(getQuietly("/actuator/health").get("status")));
			assertThatExceptionOfType(JournalUnavailableException.class)
				.isThrownBy(() -> append("starter-acct-2", 1, new TestEvents.Deposited(1)))
				.withMessageContaining("starter-acct-2");
		}
		finally {
			node.start();
			// The node is shared by every test class of this JVM: hand it back usable. The JVM's admin session
			// (SharedCassandra.adminSession, which creates the next classes' keyspaces) does not come back by itself
			// in time: SharedProjectionIT, run next, failed on NoNodeAvailableException (pool not reconnected) and
			// on a CREATE KEYSPACE timing out after 20 s (control connection not reconnected). A new one connects.
			SharedCassandra.reconnectAdminSession();
		}
		await().atMost(Duration.ofSeconds(60)).until(() -> "UP".equals(getQuietly("/actuator/health").get("status")));
		append("starter-acct-2", 1, new TestEvents.Deposited(7));
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.views.byTag.contains("starter-acct-1#3+100") && this.views.byTag.contains("starter-acct-2#2+7")
					&& this.views.byPid.contains(3L));

		aResetWhileAnotherRunsIsAConflictAndTheRunningResetGoesOn();
	}

	/**
	 * A reset asked for while another reset of the projection runs is refused with 409 and a body saying so; the
	 * running reset goes on (200, and the projection replays from the start). The first reset is held by the by-pid
	 * handler, which does not end event 4 until let go: a reset first stops the projection, and the stop waits for
	 * the event in hand.
	 */
	private void aResetWhileAnotherRunsIsAConflictAndTheRunningResetGoesOn() throws Exception {
		CountDownLatch gate = new CountDownLatch(1);
		this.views.byPidGate = gate;
		int before;
		try {
			append("starter-acct-1", 3, new TestEvents.Deposited(1));
			await().atMost(Duration.ofSeconds(20)).until(() -> this.views.byPidHeld.contains(4L));
			before = this.views.byPid.size();
			CompletableFuture<HttpResponse<String>> first = this.http.sendAsync(
					request("/actuator/projections/by-pid/reset", "{}"), HttpResponse.BodyHandlers.ofString());
			await().atMost(Duration.ofSeconds(20))
				.until(() -> "STOPPED".equals(get("/actuator/projections/by-pid").get("state")));

			HttpResponse<String> refused = post("/actuator/projections/by-pid/reset", "{\"fromSequenceNr\": 2}");

			assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
			assertThat(refused.body()).contains("reset in progress", "refused", "in progress and goes on");
			assertThat(first).isNotDone();
			gate.countDown();
			assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		}
		finally {
			gate.countDown();
			this.views.byPidGate = null;
		}
		// Event 4 ends, then the running reset (from the start, not the refused one's 2) replays everything.
		await().atMost(Duration.ofSeconds(20)).until(() -> this.views.byPid.size() >= before + 5);
		assertThat(this.views.byPid.subList(before, before + 5)).containsExactly(4L, 1L, 2L, 3L, 4L);
	}

	private void append(String pid, long expected, TestEvents... events) {
		List<EventToAppend> list = java.util.Arrays.stream(events).map((e) -> EventToAppend.of(e, "starter")).toList();
		try {
			this.journal.append(pid, expected, list).toCompletableFuture().get();
		}
		catch (java.util.concurrent.ExecutionException ex) {
			throw (RuntimeException) ex.getCause();
		}
		catch (InterruptedException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Object> component(Map<String, Object> health, String name) {
		return (Map<String, Object>) ((Map<String, Object>) health.get("components")).get(name);
	}

	private Map<String, Object> getQuietly(String path) {
		try {
			return get(path);
		}
		catch (Exception ex) {
			return Map.of("status", "ERROR");
		}
	}

	@SuppressWarnings("unchecked")
	private Map<String, Object> get(String path) throws IOException, InterruptedException {
		return this.json.readValue(getText(path), Map.class);
	}

	private String getText(String path) throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString()).body();
	}

	private int post(String path) throws IOException, InterruptedException {
		return post(path, "{}").statusCode();
	}

	private HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
		return this.http.send(request(path, json), HttpResponse.BodyHandlers.ofString());
	}

	private HttpRequest request(String path, String json) {
		return HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.POST(HttpRequest.BodyPublishers.ofString(json))
			.header("Content-Type", "application/json")
			.build();
	}

}
