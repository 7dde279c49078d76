package io.cassandrajournal.spring.boot.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.snapshot.SnapshotStore;
import io.cassandrajournal.spring.boot.actuate.RetentionEndpoint;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code retention} endpoint with its access turned on: a read is a dry run of
 * {@code journal.cassandra.retention.*}, a write with {@code dryRun: false} runs it in the background, and the
 * read then shows the stored position and nothing left to delete.
 */
@SpringBootTest(classes = StarterTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "journal.cassandra.use-tag-index=true", "journal.cassandra.retention.keep-snapshots=1",
				"management.endpoints.web.exposure.include=retention",
				"management.endpoint.retention.access=unrestricted" })
class RetentionEndpointIT {

	@DynamicPropertySource
	static void cassandra(DynamicPropertyRegistry registry) {
		SharedCassandraProperties.register(registry, "retention");
	}

	@LocalServerPort
	private int port;

	@Autowired
	private CassandraJournal journal;

	@Autowired
	private SnapshotStore snapshots;

	@Autowired
	private ApplicationContext context;

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void aReadIsADryRunAndAWriteRunsThePolicy() throws Exception {
		assertThat(this.context.getBeanNamesForType(RetentionEndpoint.class)).as("on with its access property")
			.hasSize(1);
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			events.add(EventToAppend.of(Map.of("kind", "deposited", "amount", 1), "kept"));
		}
		for (String id : List.of("retained-1", "retained-2")) {
			this.journal.append(id, 0, events).toCompletableFuture().join();
			this.snapshots.save(id, 6, 6L).toCompletableFuture().join();
		}

		HttpResponse<String> dry = send(HttpRequest.newBuilder(uri("/actuator/retention")).build());
		assertThat(dry.statusCode()).isEqualTo(200);
		assertThat(dry.body()).contains("\"entitiesCut\":2", "\"events\":12", "\"running\":false");
		assertThat(stored("retained-1")).as("a read deletes nothing").isEqualTo(10);

		HttpResponse<String> started = send(HttpRequest.newBuilder(uri("/actuator/retention"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"dryRun\": false}"))
			.build());
		assertThat(started.body()).contains("\"started\":true");

		await().alias("the run completed").atMost(Duration.ofSeconds(30))
			.until(() -> send(HttpRequest.newBuilder(uri("/actuator/retention")).build()).body()
				.contains("\"complete\":true"));
		assertThat(stored("retained-1")).isEqualTo(4);
		assertThat(stored("retained-2")).isEqualTo(4);
		assertThat(send(HttpRequest.newBuilder(uri("/actuator/retention")).build()).body()).contains("\"events\":0",
				"\"position\"");
	}

	private long stored(String id) {
		List<Long> seen = new ArrayList<>();
		this.journal.replayRaw(id, 1, Long.MAX_VALUE, (e) -> seen.add(e.sequenceNr())).toCompletableFuture().join();
		return seen.size();
	}

	private URI uri(String path) {
		return URI.create("http://localhost:" + this.port + path);
	}

	private HttpResponse<String> send(HttpRequest request) throws Exception {
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
