package io.cassandrajournal.spring.boot.autoconfigure;

import java.time.Duration;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.spring.boot.actuate.ProjectionsEndpoint;
import io.cassandrajournal.spring.boot.actuate.ProjectionsEndpointWebExtension;
import io.cassandrajournal.spring.boot.health.ProjectionsHealthIndicator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The projections health contributor takes the lease timeout from the {@link ProjectionSharing} bean the engine
 * is built with, not from the properties: a user-supplied bean may disagree with them (no Cassandra needed). The
 * endpoint's web extension is there when the endpoint is exposed over HTTP, and only then.
 */
class JournalActuatorAutoConfigurationTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JournalActuatorAutoConfiguration.class))
		.withUserConfiguration(Properties.class)
		.withBean(ProjectionEngine.class, () -> ProjectionEngine.builder(new InMemoryJournal()).build());

	@Configuration(proxyBeanMethods = false)
	@EnableConfigurationProperties(JournalCassandraProperties.class)
	static class Properties {

	}

	private static ProjectionSharing userSharing() {
		return ProjectionSharing.create(ProjectionSharingPropertiesTest.noSession(), CassandraJournalOptions.create())
			.withLeaseTiming(Duration.ofSeconds(7), Duration.ofSeconds(2));
	}

	@Test
	void aUserSuppliedSharingBeanSetsTheLeaseTimeoutWhateverThePropertiesSay() {
		this.runner.withPropertyValues("journal.cassandra.projections.sharing.enabled=true")
			.withBean(ProjectionSharing.class, JournalActuatorAutoConfigurationTest::userSharing)
			.run((context) -> assertThat(context.getBean(ProjectionsHealthIndicator.class).leaseTimeout())
				.isEqualTo(Duration.ofSeconds(7)));
		this.runner.withBean(ProjectionSharing.class, JournalActuatorAutoConfigurationTest::userSharing)
			.run((context) -> assertThat(context.getBean(ProjectionsHealthIndicator.class).leaseTimeout())
				.as("sharing.enabled unset, but the engine shares through the bean").isEqualTo(Duration.ofSeconds(7)));
	}

	@Test
	void theWebExtensionAnsweringARefusedResetWith409ComesWithTheEndpointWhenItIsExposedOverHttp() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=projections")
			.run((context) -> assertThat(context).hasSingleBean(ProjectionsEndpoint.class)
				.hasSingleBean(ProjectionsEndpointWebExtension.class));
		this.runner.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=projections")
			.run((context) -> assertThat(context).as("JMX only").hasSingleBean(ProjectionsEndpoint.class)
				.doesNotHaveBean(ProjectionsEndpointWebExtension.class));
		this.runner.run((context) -> assertThat(context).as("not exposed").doesNotHaveBean(ProjectionsEndpoint.class)
			.doesNotHaveBean(ProjectionsEndpointWebExtension.class));
	}

	@Test
	void withoutASharingBeanNoSegmentIsReportedOwnerless() {
		this.runner.run((context) -> assertThat(context.getBean(ProjectionsHealthIndicator.class).leaseTimeout())
			.isNull());
	}

}
