package io.cassandrajournal.spring.boot.embedded;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.logging.DeferredLogs;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;

class EmbeddedCassandraEnvironmentPostProcessorTest {

	@Test
	void onlyLoopbackContactPointsMayBeStoodInFor() {
		assertThat(EmbeddedCassandraEnvironmentPostProcessor.firstNonLoopback(List.of())).isNull();
		assertThat(EmbeddedCassandraEnvironmentPostProcessor.firstNonLoopback(
				List.of("127.0.0.1:9042", "localhost", "[::1]:9042", "127.0.0.5"))).isNull();
		assertThat(EmbeddedCassandraEnvironmentPostProcessor.firstNonLoopback(List.of("127.0.0.1:9042", "10.1.2.3:9042")))
			.isEqualTo("10.1.2.3:9042");
		assertThat(EmbeddedCassandraEnvironmentPostProcessor.firstNonLoopback(List.of("cassandra-1.invalid:9042")))
			.as("a name that does not resolve is not loopback")
			.isEqualTo("cassandra-1.invalid:9042");
	}

	@Test
	void aRemoteContactPointThatDoesNotAnswerIsNotReplacedByALocalNode() {
		StandardEnvironment environment = new StandardEnvironment();
		// A documentation address (TEST-NET-1): nothing answers there, as in an outage of a real cluster.
		environment.getPropertySources()
			.addFirst(new MapPropertySource("test", Map.of("journal.cassandra.embedded.enabled", "true",
					"spring.cassandra.contact-points", "192.0.2.10:9042", "journal.cassandra.embedded.port", "0")));
		new EmbeddedCassandraEnvironmentPostProcessor(new DeferredLogs()).postProcessEnvironment(environment,
				new SpringApplication());
		assertThat(environment.getPropertySources().contains("journalEmbeddedCassandra")).isFalse();
		assertThat(environment.getProperty("spring.cassandra.contact-points")).isEqualTo("192.0.2.10:9042");
	}

}
