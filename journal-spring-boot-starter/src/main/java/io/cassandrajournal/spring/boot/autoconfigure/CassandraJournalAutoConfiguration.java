package io.cassandrajournal.spring.boot.autoconfigure;

import java.time.Clock;

import com.datastax.oss.driver.api.core.CqlSession;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.cassandra.autoconfigure.CassandraAutoConfiguration;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.PropertyMapper;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.CassandraSessions;
import io.cassandrajournal.entity.EntityRepositories;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.JournalMetrics;
import io.cassandrajournal.serialization.EventSerializer;
import io.cassandrajournal.serialization.EventUpcaster;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.serialization.Upcasters;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.snapshot.SnapshotStore;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.state.DurableStateStore;

/**
 * Auto-configures the Cassandra journal, snapshot store and durable state store from
 * {@code journal.cassandra.*}.
 * <p>
 * Session rule: when {@code journal.cassandra.contact-points} is set, the journal opens its own session
 * with the journal's connection properties; otherwise it uses the application's {@link CqlSession} bean
 * (Spring Boot's {@code spring.cassandra.*}). The keyspace is {@code journal.cassandra.keyspace}, else
 * {@code spring.cassandra.keyspace-name}. Every bean backs off when the application defines its own.
 */
@AutoConfiguration(after = CassandraAutoConfiguration.class)
@ConditionalOnClass({ CqlSession.class, CassandraJournal.class })
@ConditionalOnBooleanProperty(name = "journal.cassandra.enabled", matchIfMissing = true)
@EnableConfigurationProperties(JournalCassandraProperties.class)
public final class CassandraJournalAutoConfiguration {

	@Bean
	@ConfigurationPropertiesBinding
	static ConsistencyLevelConverter journalConsistencyLevelConverter() {
		return new ConsistencyLevelConverter();
	}

	@Bean
	@ConditionalOnMissingBean
	CassandraJournalOptions cassandraJournalOptions(JournalCassandraProperties properties, Environment environment,
			ObjectProvider<Clock> clock, ObjectProvider<CassandraJournalOptionsCustomizer> customizers) {
		CassandraJournalOptions options = OptionsMapper.map(properties, environment);
		Clock userClock = clock.getIfUnique();
		if (userClock != null) {
			options = options.withClock(userClock);
		}
		for (CassandraJournalOptionsCustomizer customizer : customizers.orderedStream().toList()) {
			options = customizer.customize(options);
		}
		return options;
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	JournalSession journalSession(CassandraJournalOptions options, ObjectProvider<CqlSession> applicationSession) {
		if (!options.contactPoints().isEmpty()) {
			return JournalSession.owned(CassandraSessions.open(options));
		}
		CqlSession session = applicationSession.getIfAvailable();
		if (session == null) {
			throw new IllegalStateException("No Cassandra session for the journal: set journal.cassandra.contact-points "
					+ "and journal.cassandra.local-datacenter, or spring.cassandra.contact-points and "
					+ "spring.cassandra.local-datacenter.");
		}
		return JournalSession.shared(session);
	}

	/**
	 * The upcaster chains, from every {@link EventUpcaster} bean (a gap in a chain fails start-up, naming the
	 * kind and the missing version). Define an {@link Upcasters} bean to add snapshot upcasters or another
	 * type property.
	 */
	@Bean
	@ConditionalOnMissingBean
	Upcasters journalUpcasters(ObjectProvider<EventUpcaster> upcasters) {
		return Upcasters.builder().addAll(upcasters.orderedStream().toList()).build();
	}

	@Bean
	@ConditionalOnMissingBean
	EventSerializer journalEventSerializer(Upcasters upcasters) {
		return new JacksonEventSerializer(upcasters);
	}

	@Bean
	@ConditionalOnMissingBean(Journal.class)
	CassandraJournal cassandraJournal(JournalSession session, CassandraJournalOptions options,
			EventSerializer serializer, ObjectProvider<JournalMetrics> metrics) {
		// The layout first, once: refuse to run beside instances that lay rows out differently
		// (JournalLayoutFailureAnalyzer reports it), and learn what an unset setting means (slice-hash: the function
		// recorded for the keyspace, by this start or by another instance that recorded first). The journal is built
		// from that answer, so its factory reads the record no more; the read journal takes the journal's function
		// (JournalProjectionsAutoConfiguration). Built before the record, a journal could keep the default while
		// another instance recorded another function (docs/reliability.md, finding 26).
		CassandraJournalOptions verified = CassandraJournal.verifyLayout(session.session(), options);
		return CassandraJournal.create(session.session(), verified, serializer,
				metrics.getIfAvailable(() -> JournalMetrics.NONE));
	}

	@Bean
	@ConditionalOnMissingBean(SnapshotStore.class)
	CassandraSnapshotStore cassandraSnapshotStore(JournalSession session, CassandraJournalOptions options,
			EventSerializer serializer) {
		return CassandraSnapshotStore.create(session.session(), options, serializer);
	}

	@Bean
	@ConditionalOnMissingBean(DurableStateStore.class)
	CassandraDurableStateStore cassandraDurableStateStore(JournalSession session, CassandraJournalOptions options,
			EventSerializer serializer) {
		return CassandraDurableStateStore.create(session.session(), options, serializer);
	}

	@Bean
	@ConditionalOnMissingBean
	EntityRepositories entityRepositories(Journal journal, ObjectProvider<SnapshotStore> snapshots,
			JournalCassandraProperties properties) {
		JournalCassandraProperties.Entities entities = properties.getEntities();
		if (entities.getMaxRetries() < 0 || entities.getCacheSize() < 0) {
			throw new IllegalArgumentException("journal.cassandra.entities.max-retries and cache-size must be 0 or more, "
					+ "were " + entities.getMaxRetries() + " and " + entities.getCacheSize());
		}
		return new EntityRepositories(journal, snapshots.getIfAvailable(), entities.getMaxRetries(),
				entities.getCacheSize());
	}

	/**
	 * Maps properties onto options; each wither validates its value and names the option.
	 */
	static final class OptionsMapper {

		private OptionsMapper() {
		}

		static CassandraJournalOptions map(JournalCassandraProperties p, Environment environment) {
			Holder h = new Holder(CassandraJournalOptions.create());
			PropertyMapper map = PropertyMapper.get();
			map.from(p.getContactPoints()).to((v) -> h.set(h.get().withContactPoints(v)));
			String keyspace = (p.getKeyspace() != null) ? p.getKeyspace()
					: environment.getProperty("spring.cassandra.keyspace-name");
			if (keyspace == null) {
				throw new IllegalStateException("journal.cassandra.keyspace is not set (nor spring.cassandra.keyspace-name): "
						+ "name an existing keyspace for the journal's tables");
			}
			h.set(h.get().withKeyspace(keyspace));
			String datacenter = (p.getLocalDatacenter() != null) ? p.getLocalDatacenter()
					: environment.getProperty("spring.cassandra.local-datacenter");
			map.from(datacenter).to((v) -> h.set(h.get().withLocalDatacenter(v)));
			map.from(p.getUsername()).to((v) -> h.set(h.get().withCredentials(v, (p.getPassword() != null) ? p.getPassword() : "")));
			if (p.isSsl()) {
				try {
					h.set(h.get().withSslContext(javax.net.ssl.SSLContext.getDefault()));
				}
				catch (java.security.NoSuchAlgorithmException ex) {
					throw new IllegalStateException("journal.cassandra.ssl=true but the JVM has no default SSLContext", ex);
				}
			}
			h.set(h.get()
				.withSslHostnameValidation(p.isSslHostnameValidation())
				.withRequestTimeout(p.getRequestTimeout())
				.withStartupWait(p.getStartupWait())
				.withEventsTable(p.getEventsTable())
				.withMetadataTable(p.getMetadataTable())
				.withAllIdsTable(p.getAllIdsTable())
				.withTagIndexTable(p.getTagIndexTable())
				.withSnapshotsTable(p.getSnapshotsTable())
				.withDurableStateTable(p.getDurableStateTable())
				.withPartitionSize(p.getPartitionSize())
				.withAutoCreateTables(p.isAutoCreateTables())
				.withUseTagIndex(p.isUseTagIndex())
				.withTagBucketing(p.getTagBucketing())
				.withTagSliceGroups(p.getTagSliceGroups())
				.withConsistency(p.getConsistency())
				.withLightweightTransactions(p.isLightweightTransactions())
				.withSerialConsistency(p.getSerialConsistency())
				.withPersistenceIdBuckets(p.getPersistenceIdBuckets())
				.withPageSize(p.getPageSize())
				.withInFlightWait(p.getInFlightWait())
				.withClaimSettleTime(p.getClaimSettleTime())
				.withTagIndexTtl(p.getTagIndexTtl()));
			// Unset: the journal adopts the keyspace's recorded function (murmur3 for a new keyspace).
			map.from(p.getSliceHash()).to((v) -> h.set(h.get().withSliceHash(v)));
			return h.get();
		}

		private static final class Holder {

			private CassandraJournalOptions value;

			Holder(CassandraJournalOptions value) {
				this.value = value;
			}

			CassandraJournalOptions get() {
				return this.value;
			}

			void set(CassandraJournalOptions value) {
				this.value = value;
			}

		}

	}

}
