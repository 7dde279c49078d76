package io.cassandrajournal.spring.boot.autoconfigure;

import java.lang.reflect.Proxy;
import java.time.Duration;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The {@code journal.cassandra.projections.sharing.*} and {@code segments} properties: defaults, and a start-up
 * failure naming the property for each value the core would refuse (no Cassandra needed).
 */
class ProjectionSharingPropertiesTest {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(JournalProjectionsAutoConfiguration.class))
		.withPropertyValues("journal.cassandra.enabled=false")
		.withBean(InMemoryJournal.class, InMemoryJournal::new);

	/** A session that is never used: sharing settings only hold it until the engine is built. */
	static CqlSession noSession() {
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				(proxy, method, args) -> {
					throw new UnsupportedOperationException(method.getName());
				});
	}

	private static ProjectionSharing sharing(String... properties) {
		JournalCassandraProperties bound = new JournalCassandraProperties();
		JournalCassandraProperties.Projections.Sharing sharing = bound.getProjections().getSharing();
		for (String property : properties) {
			String[] kv = property.split("=", 2);
			switch (kv[0]) {
				case "lease-timeout" -> sharing.setLeaseTimeout(Duration.parse(kv[1]));
				case "renew-interval" -> sharing.setRenewInterval(Duration.parse(kv[1]));
				case "instance-id" -> sharing.setInstanceId(kv[1]);
				default -> throw new IllegalArgumentException(kv[0]);
			}
		}
		return JournalProjectionsAutoConfiguration.sharing(sharing, noSession(), CassandraJournalOptions.create());
	}

	@Test
	void defaultsAreTheCoresAndTheInstanceIdIsHostPidAndASuffix() {
		ProjectionSharing sharing = sharing();
		assertThat(sharing.leaseTimeout()).isEqualTo(ProjectionSharing.DEFAULT_LEASE_TIMEOUT);
		assertThat(sharing.renewInterval()).isEqualTo(ProjectionSharing.DEFAULT_RENEW_INTERVAL);
		assertThat(sharing.instanceId()).contains("-" + ProcessHandle.current().pid() + "-")
			.matches(".+-\\d+-[0-9a-f]{8}");
		assertThat(sharing().instanceId()).as("unique per engine").isNotEqualTo(sharing.instanceId());
		assertThat(new JournalCassandraProperties().getProjections().getSegments())
			.isEqualTo(ProjectionSettings.defaults().segments());
		assertThat(new JournalCassandraProperties().getProjections().getSharing().isEnabled()).isFalse();
	}

	@Test
	void aRenewIntervalAboveAThirdOfTheLeaseTimeoutFailsNamingBothProperties() {
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> sharing("lease-timeout=PT6S", "renew-interval=PT3S"))
			.satisfies((ex) -> assertThat(ex.getName()).isEqualTo("journal.cassandra.projections.sharing.renew-interval"))
			.withMessageContaining("at most a third of journal.cassandra.projections.sharing.lease-timeout (PT6S)");
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> sharing("renew-interval=PT0S"))
			.satisfies((ex) -> assertThat(ex.getName()).isEqualTo("journal.cassandra.projections.sharing.renew-interval"));
		assertThat(sharing("lease-timeout=PT6S", "renew-interval=PT2S").renewInterval()).hasSeconds(2);
	}

	@Test
	void aNonPositiveLeaseTimeoutOrABlankInstanceIdFailsNamingTheProperty() {
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> sharing("lease-timeout=PT0S"))
			.satisfies((ex) -> assertThat(ex.getName()).isEqualTo("journal.cassandra.projections.sharing.lease-timeout"));
		assertThatExceptionOfType(InvalidConfigurationPropertyValueException.class)
			.isThrownBy(() -> sharing("instance-id= "))
			.satisfies((ex) -> assertThat(ex.getName()).isEqualTo("journal.cassandra.projections.sharing.instance-id"));
	}

	@Test
	void aDefaultSegmentCountThatIsNotAPowerOfTwoFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("journal.cassandra.projections.segments=3").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("journal.cassandra.projections.segments")
				.hasMessageContaining("power of two from 1 to 1024");
		});
		this.runner.withPropertyValues("journal.cassandra.projections.segments=4")
			.run((context) -> assertThat(context.getBean(ProjectionSettings.class).segments()).isEqualTo(4));
	}

	@Test
	void sharingOverAnInMemoryJournalFailsStartUpNamingTheProperty() {
		this.runner.withPropertyValues("journal.cassandra.projections.sharing.enabled=true").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.isInstanceOf(InvalidConfigurationPropertyValueException.class)
				.hasMessageContaining("journal.cassandra.projections.sharing.enabled")
				.hasMessageContaining("needs the Cassandra journal");
		});
		this.runner.run((context) -> assertThat(context).doesNotHaveBean(ProjectionSharing.class));
	}

}
