package io.cassandrajournal.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import tools.jackson.databind.json.JsonMapper;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample as a user meets it: it starts its own embedded Cassandra node (here on a free port, in a
 * temporary directory), reports health with Cassandra in it, and serves the account API, storing events
 * in the reference format.
 */
@ExtendWith(OutputCaptureExtension.class)
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "journal.cassandra.embedded.port=0", "journal.cassandra.embedded.temporary=true",
				"journal.cassandra.embedded.max-heap=512m" })
class BankApplicationIT {

	@LocalServerPort
	private int port;

	private final HttpClient client = HttpClient.newHttpClient();

	private final JsonMapper json = JsonMapper.builder().build();

	@Autowired
	private CqlSession session;

	@Autowired
	private org.springframework.core.env.Environment environment;

	@Test
	void healthIsUpWithCassandraAndTheJournal() throws Exception {
		Response health = get("/actuator/health");
		assertThat(health.status()).isEqualTo(200);
		assertThat(health.body()).containsEntry("status", "UP");
		Map<?, ?> components = (Map<?, ?>) health.body().get("components");
		assertThat(((Map<?, ?>) components.get("cassandra")).get("status")).isEqualTo("UP");
		assertThat(((Map<?, ?>) components.get("journal")).get("status")).isEqualTo("UP");
	}

	@Test
	@SuppressWarnings("unchecked")
	void accountApiAppliesTheBusinessRulesAndAnswersProblems(CapturedOutput output) throws Exception {
		assertThat(post("/accounts/it-1", "").status()).isEqualTo(201);
		assertThat(post("/accounts/it-1", "").status()).isEqualTo(409);
		assertThat(post("/accounts/it-1/deposits", "{\"amount\": 25}").body()).containsEntry("balance", 25);
		assertThat(post("/accounts/it-1/withdrawals", "{\"amount\": 10}").body()).containsEntry("balance", 15);
		Response overdraw = post("/accounts/it-1/withdrawals", "{\"amount\": 100}");
		assertThat(overdraw.status()).isEqualTo(422);
		assertThat(overdraw.contentType()).contains("problem+json");
		assertThat(overdraw.body()).containsEntry("title", "Insufficient funds");
		for (String amount : List.of("-5", "0", "\"ten\"", "\"10\"", "2.5", "2.0", "1e3", "null", "[1]", "{}",
				"9223372036854775808", "99999999999999999999999")) {
			Response rejected = post("/accounts/it-1/deposits", "{\"amount\": " + amount + "}");
			assertThat(rejected.status()).as("amount " + amount).isEqualTo(422);
			assertThat(rejected.contentType()).contains("problem+json");
		}
		assertThat(post("/accounts/it-1/deposits", "{}").status()).as("missing amount").isEqualTo(422);
		assertThat(post("/accounts/it-1/deposits", "{not json").status()).isEqualTo(400);
		assertThat(post("/accounts/nobody/deposits", "{\"amount\": 5}").status()).isEqualTo(404);
		assertThat(get("/accounts/nobody").status()).isEqualTo(404);
		await().atMost(Duration.ofSeconds(20)).until(() -> Integer.valueOf(15).equals(get("/accounts/it-1").body().get("balance")));
		List<?> statement = getList("/accounts/it-1/statement");
		assertThat(statement).hasSize(3);
		assertThat((Map<Object, Object>) statement.get(1)).containsEntry("kind", "deposited").containsEntry("amount", 25);
		assertThat((Map<Object, Object>) statement.get(2)).containsEntry("kind", "withdrawn").containsEntry("amount", 10);

		assertThat(post("/accounts/it-max", "").status()).isEqualTo(201);
		assertThat(post("/accounts/it-max/deposits", "{\"amount\": 9223372036854775807}").body())
			.containsEntry("balance", Long.MAX_VALUE);
		Response overflow = post("/accounts/it-max/deposits", "{\"amount\": 1}");
		assertThat(overflow.status()).as("a deposit past the largest balance").isEqualTo(422);
		assertThat(overflow.body()).containsEntry("title", "Balance limit");
		assertThat(this.session.execute("SELECT max_sequence_nr FROM bank.metadata WHERE persistence_id = 'account-it-max'")
			.one()
			.getLong(0)).as("nothing appended for the rejected deposit").isEqualTo(2);

				assertThat(output.getAll()).as("bad requests are answered, not logged as errors with stack traces")
			.doesNotContain("\tat io.cassandrajournal")
			.doesNotContain("ERROR");

		Row deposit = this.session.execute("SELECT payload, tags FROM bank.events WHERE persistence_id = 'account-it-1' "
				+ "AND partition_nr = 0 AND sequence_nr = 2").one();
		assertThat(deposit.getString("payload")).isEqualTo("{\"kind\":\"deposited\",\"amount\":25}");
		assertThat(deposit.getSet("tags", String.class)).containsExactly("account");
	}

	/**
	 * Commands of the load run: 2,000 over 50 accounts from 8 clients (5,000 until 2026-12-02: the same contention
	 * on the same accounts, two and a half times as long). Withdrawals over the balance are rejected: 5 % of 5,000,
	 * 12 % of 2,000 (balances are low early in a run), so the meter floors below are half and two fifths.
	 */
	private static final int OPERATIONS = 2000;

	@Test
	void fiftyAccountsEightClientsTwoThousandOperationsLeaveReadModelsEqualToTheJournal() throws Exception {
		double appendsBefore = meter("journal_appends_seconds_count");
		double handledBefore = meter("persistence_projection_events_handled_total{application=\"bank-sample\",projection=\"balances\"}");
		HttpRequest load = HttpRequest.newBuilder(uri("/load"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"accounts\": 50, \"operations\": " + OPERATIONS + ", \"concurrency\": 8}"))
			.build();
		HttpResponse<String> response = this.client.send(load, HttpResponse.BodyHandlers.ofString());
		assertThat(response.statusCode()).as(response.body()).isEqualTo(202);
		// The run goes on in the background; GET /load shows its progress. 2,000 commands take 5-20 s here.
		await().atMost(Duration.ofMinutes(3)).pollInterval(Duration.ofMillis(500))
			.until(() -> "COMPLETED".equals(get("/load").body().get("state")));
		Map<String, Object> run = get("/load").body();
		System.out.println("load: " + run);
		assertThat(((Number) run.get("completed")).longValue()).isEqualTo(OPERATIONS);
		assertThat(((Number) run.get("failed")).longValue()).isZero();
		Map<String, Long> journalFold = new HashMap<>();
		for (int i = 0; i < 50; i++) {
			String pid = "account-load-" + i;
			long balance = 0;
			for (Row row : this.session.execute("SELECT payload FROM bank.events WHERE persistence_id = ? AND partition_nr = 0",
					pid)) {
				Map<?, ?> event = this.json.readValue(row.getString(0), Map.class);
				long amount = (event.get("amount") instanceof Number n) ? n.longValue() : 0;
				balance += "deposited".equals(event.get("kind")) ? amount : "withdrawn".equals(event.get("kind")) ? -amount : 0;
				assertThat(balance).as("journal balance of " + pid + " never negative").isNotNegative();
			}
			journalFold.put("load-" + i, balance);
		}
		await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
			Map<String, Long> readModel = new HashMap<>();
			for (Object each : getList("/accounts")) {
				Map<?, ?> account = (Map<?, ?>) each;
				String id = (String) account.get("id");
				if (id.startsWith("load-")) {
					readModel.put(id, ((Number) account.get("balance")).longValue());
				}
			}
			assertThat(readModel).isEqualTo(journalFold);
		});
		assertThat(journalFold.values()).allMatch((balance) -> balance >= 0);
		assertThat(meter("journal_appends_seconds_count")).as("append meter moved under load")
			.isGreaterThanOrEqualTo(appendsBefore + OPERATIONS / 2);
		assertThat(meter("persistence_projection_events_handled_total{application=\"bank-sample\",projection=\"balances\"}"))
			.as("projection meter moved under load").isGreaterThan(handledBefore + OPERATIONS * 2 / 5);
	}

	@Test
	void theLoadGeneratorRefusesRunsOutOfBounds() throws Exception {
		for (String body : List.of("{\"accounts\": 2147483647, \"operations\": 10, \"concurrency\": 1}",
				"{\"accounts\": 10, \"operations\": 1000001, \"concurrency\": 1}",
				"{\"accounts\": 10, \"operations\": 10, \"concurrency\": 65}",
				"{\"accounts\": 0, \"operations\": 10, \"concurrency\": 1}",
				"{\"accounts\": 10, \"operations\": -1, \"concurrency\": 1}")) {
			Response refused = post("/load", body);
			assertThat(refused.status()).as(body).isEqualTo(400);
			assertThat(refused.contentType()).contains("problem+json");
		}
	}

	/**
	 * The sample is safe by default (issue 16 item 4): it listens on loopback only, health shows components but no
	 * details, and the projections endpoint is read-only, so no request can pause, reset or skip a projection.
	 */
	@Test
	void managementIsSafeByDefault() throws Exception {
		assertThat(this.environment.getProperty("server.address")).isEqualTo("127.0.0.1");
		Response health = get("/actuator/health");
		Map<?, ?> cassandra = (Map<?, ?>) ((Map<?, ?>) health.body().get("components")).get("cassandra");
		assertThat(cassandra.get("status")).isEqualTo("UP");
		assertThat(cassandra.containsKey("details")).as("health details are off by default").isFalse();
		assertThat(get("/actuator/projections").status()).isEqualTo(200);
		for (String action : List.of("pause", "reset", "skip", "stop")) {
			Response refused = post("/actuator/projections/balances/" + action, "{}");
			assertThat(refused.status()).as(action + " must not be mapped").isIn(400, 404, 405);
		}
		assertThat(get("/actuator/projections").body().toString()).doesNotContain("PAUSED", "STOPPED");
	}

	/** Reads one sample from /actuator/prometheus; 0 when absent. */
	private double meter(String series) throws IOException, InterruptedException {
		String body = this.client.send(HttpRequest.newBuilder(uri("/actuator/prometheus")).GET().build(),
				HttpResponse.BodyHandlers.ofString()).body();
		for (String line : body.split("\n")) {
			if (line.startsWith(series + " ") || (line.startsWith(series + "{") && !series.contains("{"))) {
				return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
			}
		}
		return 0;
	}

	private List<?> getList(String path) throws IOException, InterruptedException {
		HttpResponse<String> response = this.client.send(HttpRequest.newBuilder(uri(path)).GET().build(),
				HttpResponse.BodyHandlers.ofString());
		return this.json.readValue(response.body(), List.class);
	}

	record Response(int status, String contentType, Map<String, Object> body) {
	}

	private Response get(String path) throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri(path)).GET().build());
	}

	private Response post(String path, String body) throws IOException, InterruptedException {
		return send(HttpRequest.newBuilder(uri(path))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build());
	}

	private URI uri(String path) {
		return URI.create("http://localhost:" + this.port + path);
	}

	@SuppressWarnings("unchecked")
	private Response send(HttpRequest request) throws IOException, InterruptedException {
		HttpResponse<String> response = this.client.send(request, HttpResponse.BodyHandlers.ofString());
		Map<String, Object> body = response.body().isBlank() ? Map.of() : this.json.readValue(response.body(), Map.class);
		return new Response(response.statusCode(), response.headers().firstValue("Content-Type").orElse(""), body);
	}

}
