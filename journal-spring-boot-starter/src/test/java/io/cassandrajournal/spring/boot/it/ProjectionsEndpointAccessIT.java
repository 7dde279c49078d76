package io.cassandrajournal.spring.boot.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;


import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exposed but with the default (read-only) access, the projections endpoint lists projections and refuses
 * every control operation; the prometheus endpoint, not listed, is absent.
 */
@SpringBootTest(classes = StarterTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "journal.cassandra.use-tag-index=true", "management.endpoints.web.exposure.include=projections" })
class ProjectionsEndpointAccessIT {

	@DynamicPropertySource
	static void cassandra(DynamicPropertyRegistry registry) {
		SharedCassandraProperties.register(registry, "readonly");
	}

	@LocalServerPort
	private int port;

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void writeOperationsAreOffUnlessAccessIsUnrestricted() throws Exception {
		HttpResponse<String> list = send(HttpRequest.newBuilder(uri("/actuator/projections")).build());
		assertThat(list.statusCode()).isEqualTo(200);
		assertThat(list.body()).contains("by-tag", "by-pid", "\"lagMillis\"", "\"lagEvents\"");
		for (String action : new String[] { "pause", "resume", "reset", "skip", "redeliver" }) {
			HttpResponse<String> post = send(HttpRequest.newBuilder(uri("/actuator/projections/by-tag/" + action))
				.header("Content-Type", "application/json")
				.POST(HttpRequest.BodyPublishers.ofString("{}"))
				.build());
			assertThat(post.statusCode()).as(action).isIn(404, 405);
		}
		assertThat(send(HttpRequest.newBuilder(uri("/actuator/projections/by-tag")).build()).body()).contains("RUNNING");
		assertThat(send(HttpRequest.newBuilder(uri("/actuator/prometheus")).build()).statusCode()).isEqualTo(404);
	}

	private URI uri(String path) {
		return URI.create("http://localhost:" + this.port + path);
	}

	private HttpResponse<String> send(HttpRequest request) throws Exception {
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

}
