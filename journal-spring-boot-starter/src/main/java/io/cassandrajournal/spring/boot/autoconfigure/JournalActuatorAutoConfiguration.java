package io.cassandrajournal.spring.boot.autoconfigure;

import java.util.EnumSet;
import java.util.Set;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.projection.ProjectionState;
import io.cassandrajournal.spring.boot.actuate.ProjectionsEndpoint;
import io.cassandrajournal.spring.boot.actuate.ProjectionsEndpointWebExtension;
import io.cassandrajournal.spring.boot.health.ProjectionsHealthIndicator;

/**
 * The {@code projections} actuator endpoint (with its web extension, which answers a reset refused because another
 * runs with 409) and the {@code projections} health contributor. The health reports
 * ownerless segments with the lease timeout of the {@link ProjectionSharing} bean (the one the engine shares
 * through), whether it came from the {@code journal.cassandra.projections.sharing.*} properties or from the
 * application.
 */
@AutoConfiguration(after = JournalProjectionsAutoConfiguration.class)
@ConditionalOnBean(ProjectionEngine.class)
public final class JournalActuatorAutoConfiguration {

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Endpoint.class)
	@ConditionalOnAvailableEndpoint(ProjectionsEndpoint.class)
	static class EndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		ProjectionsEndpoint projectionsEndpoint(ProjectionEngine engine) {
			return new ProjectionsEndpoint(engine);
		}

		/** Over HTTP only: answers a reset refused because another runs with 409. */
		@Bean
		@ConditionalOnMissingBean
		@ConditionalOnBean(ProjectionsEndpoint.class)
		@ConditionalOnAvailableEndpoint(endpoint = ProjectionsEndpoint.class, exposure = EndpointExposure.WEB)
		ProjectionsEndpointWebExtension projectionsEndpointWebExtension(ProjectionsEndpoint endpoint) {
			return new ProjectionsEndpointWebExtension(endpoint);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HealthIndicator.class)
	@ConditionalOnEnabledHealthIndicator("projections")
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "projectionsHealthIndicator")
		ProjectionsHealthIndicator projectionsHealthIndicator(ProjectionEngine engine,
				JournalCassandraProperties properties, ObjectProvider<ProjectionSharing> sharing) {
			Set<ProjectionState> down = switch (properties.getProjections().getHealthDownWhen()) {
				case FAILED -> EnumSet.of(ProjectionState.FAILED);
				case FAILING -> EnumSet.of(ProjectionState.FAILED, ProjectionState.FAILING);
				case NEVER -> EnumSet.noneOf(ProjectionState.class);
			};
			// The sharing bean the engine is built with (JournalProjectionsAutoConfiguration), which a user-supplied
			// one replaces: its lease timeout, not the properties', is the one the leases run on.
			ProjectionSharing inUse = sharing.getIfAvailable();
			return new ProjectionsHealthIndicator(engine, down, (inUse != null) ? inUse.leaseTimeout() : null);
		}

	}

}
