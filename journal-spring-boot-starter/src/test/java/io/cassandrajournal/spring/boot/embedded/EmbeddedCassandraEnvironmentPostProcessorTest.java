package io.cassandrajournal.spring.boot.embedded;

import java.io.InputStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.logging.DeferredLogs;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.StandardEnvironment;

import tools.jackson.databind.json.JsonMapper;

import io.cassandrajournal.spring.boot.autoconfigure.JournalCassandraProperties;

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

	@Test
	void everyEmbeddedKeyIsBoundOnce() throws Exception {
		Map<String, String> values = Map.of("journal.cassandra.embedded.enabled", "true",
				"journal.cassandra.embedded.port", "9142", "journal.cassandra.embedded.directory", "/tmp/node-data",
				"journal.cassandra.embedded.temporary", "true", "journal.cassandra.embedded.max-heap", "768m",
				"journal.cassandra.embedded.startup-timeout", "3m", "journal.cassandra.embedded.create-keyspace",
				"false");
		try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			@SuppressWarnings("unchecked")
			List<Map<String, Object>> properties = (List<Map<String, Object>>) JsonMapper.builder()
				.build()
				.readValue(in, Map.class)
				.get("properties");
			assertThat(properties).extracting((p) -> (String) p.get("name"))
				.filteredOn((name) -> name.startsWith("journal.cassandra.embedded."))
				.as("every embedded key has a non-default value in this test")
				.containsExactlyInAnyOrderElementsOf(values.keySet());
		}
		JournalCassandraProperties.Embedded defaults = new JournalCassandraProperties.Embedded();
		JournalCassandraProperties.Embedded bound = EmbeddedCassandraEnvironmentPostProcessor
			.bindEmbedded(new Binder(new MapConfigurationPropertySource(values)));
		assertThat(bound.isEnabled()).isTrue().isNotEqualTo(defaults.isEnabled());
		assertThat(bound.getPort()).isEqualTo(9142);
		assertThat(bound.getDirectory()).isEqualTo(Path.of("/tmp/node-data"));
		assertThat(bound.isTemporary()).isTrue().isNotEqualTo(defaults.isTemporary());
		assertThat(bound.getMaxHeap()).isEqualTo("768m").isNotEqualTo(defaults.getMaxHeap());
		assertThat(bound.getStartupTimeout()).isEqualTo(Duration.ofMinutes(3)).isNotEqualTo(defaults.getStartupTimeout());
		assertThat(bound.isCreateKeyspace()).isFalse().isNotEqualTo(defaults.isCreateKeyspace());
		assertThat(EmbeddedCassandraEnvironmentPostProcessor.bindEmbedded(new Binder()).getMaxHeap())
			.as("unset keys keep the class's defaults")
			.isEqualTo(defaults.getMaxHeap());
	}

}
