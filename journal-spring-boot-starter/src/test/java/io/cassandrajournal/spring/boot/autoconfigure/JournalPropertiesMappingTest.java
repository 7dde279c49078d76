package io.cassandrajournal.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.function.Function;
import java.util.stream.Collectors;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.springframework.beans.BeanWrapper;
import org.springframework.beans.PropertyAccessorFactory;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.mock.env.MockEnvironment;
import org.springframework.test.util.ReflectionTestUtils;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.entity.EntityRepositories;
import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.projection.ProjectionState;
import io.cassandrajournal.projection.RecoveryStrategy;
import io.cassandrajournal.spring.boot.health.ProjectionsHealthIndicator;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@code journal.cassandra.*} key set to a value that is not its default arrives where it is used. The key
 * list is compared with the generated configuration metadata, so a key added to {@link JournalCassandraProperties}
 * without a line here fails {@link #everyKeyIsCovered()} until its mapping is shown.
 */
class JournalPropertiesMappingTest {

	/** Keys whose arrival needs a context or a node, and the test that shows it. */
	private static final Map<String, String> ELSEWHERE = Map.of("journal.cassandra.enabled",
			"CassandraJournalAutoConfigurationIT.theSwitchTurnsEverythingOff",
			"journal.cassandra.projections.enabled", "CassandraJournalAutoConfigurationIT.projectionSwitches",
			"journal.cassandra.projections.dead-letter-queue", "CassandraJournalAutoConfigurationIT.projectionSwitches",
			"journal.cassandra.projections.dead-letter-table", "CassandraJournalAutoConfigurationIT.everyPropertyIsMapped",
			"journal.cassandra.embedded.*", "EmbeddedCassandraEnvironmentPostProcessorTest.everyEmbeddedKeyIsBoundOnce",
			"journal.cassandra.retention.*", "JournalRetentionPropertiesTest.everyKeyArrivesInThePolicy");

	/** Key, a value that is not its default, and where it must arrive. */
	private static final Map<String, Check> NON_DEFAULT = new LinkedHashMap<>();

	static {
		option("contact-points", "10.0.0.1:9142", (o) -> o.contactPoints(), java.util.List.of("10.0.0.1:9142"));
		option("keyspace", "mapped_ks", (o) -> o.keyspace().orElseThrow(), "mapped_ks");
		option("local-datacenter", "dc9", (o) -> o.localDatacenter().orElseThrow(), "dc9");
		option("username", "alice", (o) -> o.username().orElseThrow(), "alice");
		option("password", "secret", (o) -> o.password().orElseThrow(), "secret");
		option("ssl", "true", (o) -> o.sslContext().isPresent(), true);
		option("ssl-hostname-validation", "false", CassandraJournalOptions::sslHostnameValidation, false);
		option("request-timeout", "7s", CassandraJournalOptions::requestTimeout, Duration.ofSeconds(7));
		option("startup-wait", "45s", CassandraJournalOptions::startupWait, Duration.ofSeconds(45));
		option("in-flight-wait", "5s", CassandraJournalOptions::inFlightWait, Duration.ofSeconds(5));
		option("claim-settle-time", "7s", CassandraJournalOptions::claimSettleTime, Duration.ofSeconds(7));
		option("tag-index-ttl", "1h", CassandraJournalOptions::tagIndexTtl, Duration.ofHours(1));
		option("events-table", "my_events", CassandraJournalOptions::eventsTable, "my_events");
		option("metadata-table", "my_metadata", CassandraJournalOptions::metadataTable, "my_metadata");
		option("all-ids-table", "my_ids", CassandraJournalOptions::allIdsTable, "my_ids");
		option("tag-index-table", "my_tags", CassandraJournalOptions::tagIndexTable, "my_tags");
		option("snapshots-table", "my_snapshots", CassandraJournalOptions::snapshotsTable, "my_snapshots");
		option("durable-state-table", "my_state", CassandraJournalOptions::durableStateTable, "my_state");
		option("partition-size", "1000", CassandraJournalOptions::partitionSize, 1000L);
		option("auto-create-tables", "false", CassandraJournalOptions::autoCreateTables, false);
		option("use-tag-index", "true", CassandraJournalOptions::useTagIndex, true);
		option("tag-bucketing", "hour", CassandraJournalOptions::tagBucketing, TagBucketing.HOUR);
		// Combined with tag-bucketing (hour, above) since 2026-12-02.
		option("tag-slice-groups", "16", CassandraJournalOptions::tagSliceGroups, 16);
		option("slice-hash", "string-hash", CassandraJournalOptions::sliceHash, SliceHash.STRING_HASH);
		option("consistency", "one", CassandraJournalOptions::consistency, DefaultConsistencyLevel.ONE);
		option("lightweight-transactions", "false", CassandraJournalOptions::lightweightTransactions, false);
		option("serial-consistency", "local-serial", (o) -> o.serialConsistency().orElseThrow(),
				DefaultConsistencyLevel.LOCAL_SERIAL);
		option("persistence-id-buckets", "4", CassandraJournalOptions::persistenceIdBuckets, 4);
		option("page-size", "250", CassandraJournalOptions::pageSize, 250);
		entities("max-retries", "5", EntityRepositories::maxRetries, 5);
		entities("cache-size", "50", EntityRepositories::cacheSize, 50);
		projection("poll-interval", "250ms", ProjectionSettings::pollInterval, Duration.ofMillis(250));
		projection("recovery-strategy", "retry-and-skip", ProjectionSettings::recoveryStrategy,
				RecoveryStrategy.RETRY_AND_SKIP);
		projection("max-retries", "7", ProjectionSettings::maxRetries, 7);
		projection("retry-backoff", "2s", ProjectionSettings::retryBackoff, Duration.ofSeconds(2));
		projection("max-retry-backoff", "90s", ProjectionSettings::maxRetryBackoff, Duration.ofSeconds(90));
		projection("consistency-window", "1s", (s) -> s.feed().consistencyWindow(), Duration.ofSeconds(1));
		projection("backtrack-window", "3s", (s) -> s.feed().backtrackWindow(), Duration.ofSeconds(3));
		projection("crash-gap-recheck-window", "20m", ProjectionSettings::crashGapRecheckWindow, Duration.ofMinutes(20));
		projection("page-size", "40", (s) -> s.feed().pageSize(), 40);
		projection("park-after-dead-letter", "true", ProjectionSettings::parkAfterDeadLetter, true);
		projection("concurrency", "3", ProjectionSettings::concurrency, 3);
		projection("segments", "8", ProjectionSettings::segments, 8);
		NON_DEFAULT.put("journal.cassandra.projections.sharing.enabled",
				new Check("true", (m) -> m.healthLeaseTimeout, Duration.ofSeconds(30)));
		NON_DEFAULT.put("journal.cassandra.projections.sharing.instance-id",
				new Check("orders-7", (m) -> m.sharing.instanceId(), "orders-7"));
		NON_DEFAULT.put("journal.cassandra.projections.sharing.lease-timeout",
				new Check("30s", (m) -> m.sharing.leaseTimeout(), Duration.ofSeconds(30)));
		NON_DEFAULT.put("journal.cassandra.projections.sharing.renew-interval",
				new Check("5s", (m) -> m.sharing.renewInterval(), Duration.ofSeconds(5)));
		NON_DEFAULT.put("journal.cassandra.projections.threads", new Check("5", (m) -> m.threads, 5));
		NON_DEFAULT.put("journal.cassandra.projections.health-down-when",
				new Check("failing", (m) -> m.downStates, EnumSet.of(ProjectionState.FAILED, ProjectionState.FAILING)));
	}

	private static void option(String key, String value, Function<CassandraJournalOptions, Object> arrived,
			Object expected) {
		NON_DEFAULT.put("journal.cassandra." + key, new Check(value, (m) -> arrived.apply(m.options), expected));
	}

	private static void projection(String key, String value, Function<ProjectionSettings, Object> arrived,
			Object expected) {
		NON_DEFAULT.put("journal.cassandra.projections." + key,
				new Check(value, (m) -> arrived.apply(m.settings), expected));
	}

	private static void entities(String key, String value, Function<EntityRepositories, Object> arrived,
			Object expected) {
		NON_DEFAULT.put("journal.cassandra.entities." + key,
				new Check(value, (m) -> arrived.apply(m.repositories), expected));
	}

	@Test
	void everyKeyIsCovered() throws Exception {
		Set<String> keys = ConfigurationMetadataTest.metadataProperties()
			.stream()
			.map((p) -> (String) p.get("name"))
			.map((name) -> name.startsWith("journal.cassandra.embedded.") ? "journal.cassandra.embedded.*" : name)
			.map((name) -> name.startsWith(ConfigurationMetadataTest.RETENTION) ? "journal.cassandra.retention.*" : name)
			.collect(Collectors.toCollection(TreeSet::new));
		Set<String> covered = new TreeSet<>(NON_DEFAULT.keySet());
		covered.addAll(ELSEWHERE.keySet());
		assertThat(covered).as("keys with a mapping check; add the new key's check here").isEqualTo(keys);
	}

	@Test
	void everyValueHereDiffersFromItsDefault() {
		JournalCassandraProperties bound = bindAll();
		BeanWrapper boundValues = PropertyAccessorFactory.forBeanPropertyAccess(bound);
		BeanWrapper defaults = PropertyAccessorFactory.forBeanPropertyAccess(new JournalCassandraProperties());
		for (String key : NON_DEFAULT.keySet()) {
			String path = ConfigurationMetadataTest.beanPath(key);
			assertThat(boundValues.getPropertyValue(path)).as(key).isNotEqualTo(defaults.getPropertyValue(path));
		}
	}

	@Test
	void tagSliceGroupsArrives() {
		JournalCassandraProperties bound = new Binder(new MapConfigurationPropertySource(
				Map.of("journal.cassandra.tag-slice-groups", "16", "journal.cassandra.keyspace", "mapped_ks")))
			.bindOrCreate("journal.cassandra", JournalCassandraProperties.class);
		assertThat(new JournalCassandraProperties().getTagSliceGroups()).isZero();
		assertThat(CassandraJournalAutoConfiguration.OptionsMapper.map(bound, new MockEnvironment()).tagSliceGroups())
			.isEqualTo(16);
	}

	/**
	 * {@code slice-hash} has no default of its own: unset, the options leave it to the keyspace's record (the journal
	 * adopts it); set, it is the options' configured function.
	 */
	@Test
	void sliceHashIsLeftToTheKeyspaceUnlessSet() {
		JournalCassandraProperties unset = new Binder(
				new MapConfigurationPropertySource(Map.of("journal.cassandra.keyspace", "mapped_ks")))
			.bindOrCreate("journal.cassandra", JournalCassandraProperties.class);
		assertThat(unset.getSliceHash()).isNull();
		assertThat(CassandraJournalAutoConfiguration.OptionsMapper.map(unset, new MockEnvironment())
			.configuredSliceHash()).isEmpty();
		JournalCassandraProperties set = new Binder(new MapConfigurationPropertySource(
				Map.of("journal.cassandra.slice-hash", "murmur3", "journal.cassandra.keyspace", "mapped_ks")))
			.bindOrCreate("journal.cassandra", JournalCassandraProperties.class);
		assertThat(CassandraJournalAutoConfiguration.OptionsMapper.map(set, new MockEnvironment())
			.configuredSliceHash()).contains(SliceHash.MURMUR3);
	}

	@Test
	void everyValueArrives() {
		Mapped mapped = new Mapped(bindAll());
		try {
			NON_DEFAULT.forEach((key, check) -> assertThat(check.arrived().apply(mapped)).as(key)
				.isEqualTo(check.expected()));
		}
		finally {
			mapped.engine.close();
		}
	}

	private static JournalCassandraProperties bindAll() {
		Map<String, String> values = new LinkedHashMap<>();
		NON_DEFAULT.forEach((key, check) -> values.put(key, check.value()));
		return new Binder(new MapConfigurationPropertySource(values)).bindOrCreate("journal.cassandra",
				JournalCassandraProperties.class);
	}

	/** What the auto-configuration's bean methods make of the properties. */
	private static final class Mapped {

		final CassandraJournalOptions options;

		final ProjectionSettings settings;

		final EntityRepositories repositories;

		final ProjectionEngine engine;

		final int threads;

		final Set<ProjectionState> downStates;

		final @Nullable Duration healthLeaseTimeout;

		final ProjectionSharing sharing;

		Mapped(JournalCassandraProperties properties) {
			this.options = CassandraJournalAutoConfiguration.OptionsMapper.map(properties, new MockEnvironment());
			this.settings = new JournalProjectionsAutoConfiguration().projectionDefaults(properties);
			InMemoryJournal journal = new InMemoryJournal();
			this.repositories = new CassandraJournalAutoConfiguration().entityRepositories(journal,
					new org.springframework.beans.factory.support.StaticListableBeanFactory()
						.getBeanProvider(io.cassandrajournal.snapshot.SnapshotStore.class),
					properties);
			this.engine = JournalProjectionsAutoConfiguration.engineBuilder(journal, properties).build();
			// The engine does not expose its pool; its size is what threads configures.
			this.threads = ((ScheduledThreadPoolExecutor) ReflectionTestUtils.getField(this.engine, "executor"))
				.getCorePoolSize();
			this.sharing = JournalProjectionsAutoConfiguration.sharing(properties.getProjections().getSharing(),
					ProjectionSharingPropertiesTest.noSession(), this.options);
			// The sharing bean exists when sharing is enabled; the health takes its lease timeout from it.
			org.springframework.beans.factory.support.StaticListableBeanFactory beans =
					new org.springframework.beans.factory.support.StaticListableBeanFactory();
			if (properties.getProjections().getSharing().isEnabled()) {
				beans.addBean("projectionSharing", this.sharing);
			}
			ProjectionsHealthIndicator health = new JournalActuatorAutoConfiguration.HealthConfiguration()
				.projectionsHealthIndicator(this.engine, properties, beans.getBeanProvider(ProjectionSharing.class));
			this.downStates = health.downStates();
			this.healthLeaseTimeout = health.leaseTimeout();
		}

	}

	private record Check(String value, Function<Mapped, Object> arrived, Object expected) {
	}

}
