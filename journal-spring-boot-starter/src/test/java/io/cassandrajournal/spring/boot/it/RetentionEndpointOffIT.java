package io.cassandrajournal.spring.boot.it;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.ApplicationContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import io.cassandrajournal.retention.RetentionRunner;
import io.cassandrajournal.spring.boot.actuate.RetentionEndpoint;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code retention} endpoint is off by default: even exposed over the web, without
 * {@code management.endpoint.retention.access} it is not a bean and {@code /actuator/retention} is not found, while
 * the Java tools (the runner) are there. {@link RetentionEndpointIT} is the same application with the access on.
 */
@SpringBootTest(classes = StarterTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "journal.cassandra.use-tag-index=true", "management.endpoints.web.exposure.include=*" })
class RetentionEndpointOffIT {

	@DynamicPropertySource
	static void cassandra(DynamicPropertyRegistry registry) {
		SharedCassandraProperties.register(registry, "retentionoff");
	}

	@LocalServerPort
	private int port;

	@Autowired
	private ApplicationContext context;

	@Test
	void withoutItsAccessPropertyTheEndpointIsNeitherABeanNorReachable() throws Exception {
		assertThat(this.context.getBeanNamesForType(RetentionEndpoint.class)).isEmpty();
		assertThat(this.context.getBeanNamesForType(RetentionRunner.class)).hasSize(1);
		HttpClient http = HttpClient.newHttpClient();
		HttpResponse<String> read = http.send(
				HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/actuator/retention")).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(read.statusCode()).isEqualTo(404);
		HttpResponse<String> write = http.send(HttpRequest
			.newBuilder(URI.create("http://localhost:" + this.port + "/actuator/retention"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"dryRun\": false}"))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(write.statusCode()).isEqualTo(404);
		HttpResponse<String> index = http.send(
				HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/actuator")).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(index.statusCode()).isEqualTo(200);
		assertThat(index.body()).as("other endpoints are exposed, retention is not").contains("/actuator/health")
			.doesNotContain("/actuator/retention");
	}

}
