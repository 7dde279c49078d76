package io.cassandrajournal.spring.boot.autoconfigure;

import java.net.InetAddress;
import java.time.Duration;
import java.util.UUID;

import com.datastax.oss.driver.api.core.CqlSession;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.AnnotatedBeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.source.InvalidConfigurationPropertyValueException;
import org.springframework.context.annotation.Bean;
import org.springframework.core.type.MethodMetadata;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.projection.CassandraDeadLetterQueue;
import io.cassandrajournal.projection.DeadLetterQueue;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.InMemoryOffsetStore;
import io.cassandrajournal.projection.OffsetStore;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.ReadJournal;
import io.cassandrajournal.serialization.EventSerializer;
import io.cassandrajournal.spring.boot.projection.InMemoryCursors;
import io.cassandrajournal.spring.boot.projection.ProjectionLifecycle;
import io.cassandrajournal.state.DurableStateStore;

/**
 * The query side and the projection engine, and the lifecycle that runs {@code @ProjectionHandler} methods
 * ({@code journal.cassandra.projections.enabled}). Over Cassandra (a {@link JournalSession}): a
 * {@link CassandraReadJournal}, durable offsets in the durable state table and a Cassandra dead-letter
 * queue. Over an application's {@link InMemoryJournal} bean (no node, for example a plain
 * {@code @SpringBootTest} with {@code journal.cassandra.enabled=false}): its read side and in-memory
 * offsets. The engine depends on the {@link ReadJournal} interface only; every bean backs off when the
 * application defines its own.
 */
@AutoConfiguration(after = { CassandraJournalAutoConfiguration.class, JournalMetricsAutoConfiguration.class },
		afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnBean(Journal.class)
@ConditionalOnBooleanProperty(name = "journal.cassandra.projections.enabled", matchIfMissing = true)
@EnableConfigurationProperties(JournalCassandraProperties.class)
public final class JournalProjectionsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(ReadJournal.class)
	@ConditionalOnBean(JournalSession.class)
	CassandraReadJournal cassandraReadJournal(Journal journal, JournalSession session, CassandraJournalOptions options,
			EventSerializer serializer, ConfigurableListableBeanFactory beanFactory) {
		CassandraJournalOptions layout = autoConfigured(beanFactory, journal) ? layoutOf(journal, options)
				: verifiedFor(journal, session.session(), options);
		return CassandraReadJournal.create(journal, session.session(), layout, serializer);
	}

	/**
	 * @param journal the journal bean
	 * @param options the journal options bean
	 * @return the options with the journal's slice function when they leave it unset and the journal is a
	 * {@link CassandraJournal} of the same keyspace and events table: the auto-configured one is built from what
	 * {@code verifyLayout} recorded or found, so the read journal segments entities as the journal writes them
	 * without reading the layout record again; otherwise the options as they are (the factory looks the record up)
	 */
	static CassandraJournalOptions layoutOf(Journal journal, CassandraJournalOptions options) {
		if (options.configuredSliceHash().isEmpty() && journal instanceof CassandraJournal cassandra
				&& sameEvents(cassandra.options(), options)) {
			return options.withSliceHash(cassandra.options().sliceHash());
		}
		return options;
	}

	/**
	 * The read journal over an application's own journal bean, which the starter did not verify (engineer L2, review
	 * of finding 27): the layout is verified for the read journal's options, and a {@link CassandraJournal} of the
	 * same events table whose slice function differs from the recorded one is refused (its sliced tag rows and the
	 * read journal's segments would cover different entities; taking its function, the read journal would follow it
	 * away from the keyspace's cursors).
	 * @param journal the application's journal bean
	 * @param session the journal's session
	 * @param options the journal options bean
	 * @return the options {@code verifyLayout} returned
	 */
	static CassandraJournalOptions verifiedFor(Journal journal, CqlSession session, CassandraJournalOptions options) {
		CassandraJournalOptions verified = CassandraJournal.verifyLayout(session, options);
		if (journal instanceof CassandraJournal cassandra && sameEvents(cassandra.options(), options)
				&& cassandra.options().sliceHash() != verified.sliceHash()) {
			String recorded = verified.sliceHash().name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
			throw new IllegalStateException("The application's CassandraJournal bean on " + options.requireKeyspace()
					+ "." + options.eventsTable() + " puts entities in slices with " + cassandra.options().sliceHash()
					+ ", but the keyspace's layout record holds " + verified.sliceHash() + " (the function of its "
					+ "segments' cursors and sliced tag rows): the read journal's segments would not match what the "
					+ "journal writes. Build the journal from the options CassandraJournal.verifyLayout(session, options) "
					+ "returns, or with withSliceHash(SliceHash." + verified.sliceHash() + "); where it is built from "
					+ "the starter's options, set journal.cassandra.slice-hash=" + recorded + " or leave it unset.");
		}
		return verified;
	}

	private static boolean sameEvents(CassandraJournalOptions journal, CassandraJournalOptions options) {
		return journal.requireKeyspace().equals(options.requireKeyspace())
				&& journal.eventsTable().equals(options.eventsTable());
	}

	/**
	 * @return whether {@code journal} is the bean {@link CassandraJournalAutoConfiguration} built (from
	 * {@code verifyLayout}'s answer); false when its definition does not say (then the layout is verified again)
	 */
	private static boolean autoConfigured(ConfigurableListableBeanFactory beanFactory, Journal journal) {
		for (String name : beanFactory.getBeanNamesForType(Journal.class, false, false)) {
			if (beanFactory.containsSingleton(name) && beanFactory.getSingleton(name) == journal
					&& beanFactory.containsBeanDefinition(name)
					&& beanFactory.getBeanDefinition(name) instanceof AnnotatedBeanDefinition definition) {
				MethodMetadata factoryMethod = definition.getFactoryMethodMetadata();
				return factoryMethod != null
						&& CassandraJournalAutoConfiguration.class.getName().equals(factoryMethod.getDeclaringClassName());
			}
		}
		return false;
	}

	@Bean
	@ConditionalOnMissingBean(ReadJournal.class)
	@ConditionalOnBean(InMemoryJournal.class)
	ReadJournal inMemoryReadJournal(InMemoryJournal journal) {
		return journal.readJournal();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(DurableStateStore.class)
	OffsetStore journalOffsetStore(DurableStateStore durableStateStore) {
		return new DurableStateOffsetStore(durableStateStore);
	}

	@Bean
	@ConditionalOnMissingBean(OffsetStore.class)
	@ConditionalOnBean(InMemoryJournal.class)
	InMemoryOffsetStore inMemoryOffsetStore() {
		return new InMemoryOffsetStore();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(JournalSession.class)
	@ConditionalOnBooleanProperty(name = "journal.cassandra.projections.dead-letter-queue", matchIfMissing = true)
	DeadLetterQueue journalDeadLetterQueue(JournalSession session, CassandraJournalOptions options,
			JournalCassandraProperties properties) {
		return CassandraDeadLetterQueue.create(session.session(), options,
				properties.getProjections().getDeadLetterTable());
	}

	@Bean
	@ConditionalOnMissingBean
	ProjectionSettings projectionDefaults(JournalCassandraProperties properties) {
		JournalCassandraProperties.Projections p = properties.getProjections();
		return ProjectionSettings.defaults()
			.withRecoveryStrategy(p.getRecoveryStrategy())
			.withMaxRetries(p.getMaxRetries())
			.withRetryBackoff(p.getRetryBackoff(), p.getMaxRetryBackoff())
			.withPollInterval(p.getPollInterval())
			.withParkAfterDeadLetter(p.isParkAfterDeadLetter())
			.withConcurrency(p.getConcurrency())
			.withFeed(new FeedSettings(p.getConsistencyWindow(), p.getBacktrackWindow(), p.getPageSize()))
			.withCrashGapRecheckWindow(p.getCrashGapRecheckWindow())
			.withSegments(segments(p.getSegments()));
	}

	private static int segments(int segments) {
		try {
			return ProjectionSettings.defaults().withSegments(segments).segments();
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException("journal.cassandra.projections.segments", segments,
					ex.getMessage());
		}
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBooleanProperty("journal.cassandra.projections.sharing.enabled")
	ProjectionSharing projectionSharing(ObjectProvider<JournalSession> session, ObjectProvider<CassandraJournalOptions> options,
			JournalCassandraProperties properties) {
		JournalSession journalSession = session.getIfAvailable();
		CassandraJournalOptions journalOptions = options.getIfAvailable();
		if (journalSession == null || journalOptions == null) {
			throw new InvalidConfigurationPropertyValueException("journal.cassandra.projections.sharing.enabled", true,
					"sharing projections needs the Cassandra journal (leases and cursors live in Cassandra), not an "
							+ "in-memory one");
		}
		return sharing(properties.getProjections().getSharing(), journalSession.session(), journalOptions);
	}

	/**
	 * Maps the {@code journal.cassandra.projections.sharing.*} properties, each checked with a message naming it.
	 * @param p the properties
	 * @param session the session the lease and membership tables are written through
	 * @param options the journal's options (keyspace, durable state table)
	 * @return the sharing settings
	 */
	static ProjectionSharing sharing(JournalCassandraProperties.Projections.Sharing p, CqlSession session,
			CassandraJournalOptions options) {
		String prefix = "journal.cassandra.projections.sharing.";
		Duration timeout = p.getLeaseTimeout();
		Duration renew = p.getRenewInterval();
		if (timeout.isNegative() || timeout.isZero()) {
			throw new InvalidConfigurationPropertyValueException(prefix + "lease-timeout", timeout, "must be positive");
		}
		String instanceId = p.getInstanceId();
		if (instanceId != null && instanceId.isBlank()) {
			throw new InvalidConfigurationPropertyValueException(prefix + "instance-id", instanceId,
					"must not be blank; leave it unset for host name, process id and a random suffix");
		}
		ProjectionSharing sharing = ProjectionSharing.create(session, options)
			.withInstanceId((instanceId != null) ? instanceId.trim() : defaultInstanceId());
		try {
			// ProjectionSharing enforces the timing rule; this only names the properties in its refusal.
			return sharing.withLeaseTiming(timeout, renew);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidConfigurationPropertyValueException(prefix + "renew-interval", renew,
					"must be positive and at most a third of " + prefix + "lease-timeout (" + timeout
							+ "), so that an owner renews several times before another instance may take its segments");
		}
	}

	/** @return {@code <host>-<pid>-<random>}: readable in the endpoint, unique per running instance */
	static String defaultInstanceId() {
		String host;
		try {
			host = InetAddress.getLocalHost().getHostName();
		}
		catch (Exception ex) {
			host = "host";
		}
		return host + "-" + ProcessHandle.current().pid() + "-" + UUID.randomUUID().toString().substring(0, 8);
	}

	@Bean
	@ConditionalOnMissingBean
	InMemoryCursors journalInMemoryCursors() {
		return new InMemoryCursors();
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	@ConditionalOnBean({ ReadJournal.class, OffsetStore.class })
	ProjectionEngine projectionEngine(Journal journal, ReadJournal readJournal, OffsetStore offsetStore,
			InMemoryCursors inMemoryCursors, ObjectProvider<DeadLetterQueue> deadLetterQueue,
			ObjectProvider<MeterRegistry> meterRegistry, ObjectProvider<EventSerializer> serializer,
			ObjectProvider<CassandraJournalOptions> options, ObjectProvider<ProjectionSharing> sharing,
			JournalCassandraProperties properties) {
		ProjectionEngine.Builder builder = engineBuilder(journal, properties).readJournal(readJournal)
			.serializer(serializer.getIfAvailable(readJournal::serializer))
			.deadLetterQueue(deadLetterQueue.getIfAvailable());
		ProjectionSharing projectionSharing = sharing.getIfAvailable();
		if (projectionSharing != null) {
			// Shared cursors are fenced by lease epoch in the durable store; rebuildOnStart projections refuse.
			builder.sharing(projectionSharing).offsetStore(offsetStore);
		}
		else {
			// Durable cursors, except those of @ProjectionHandler(rebuildOnStart = true) projections.
			builder.offsetStore(inMemoryCursors.around(offsetStore));
		}
		CassandraJournalOptions journalOptions = options.getIfAvailable();
		if (journalOptions != null) {
			builder.clock(journalOptions.clock());
		}
		MeterRegistry registry = meterRegistry.getIfUnique();
		if (registry != null) {
			builder.meterRegistry(registry);
		}
		return builder.build();
	}

	/** The engine's own properties ({@code journal.cassandra.projections.threads}). */
	static ProjectionEngine.Builder engineBuilder(Journal journal, JournalCassandraProperties properties) {
		return ProjectionEngine.builder(journal).threads(properties.getProjections().getThreads());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(ProjectionEngine.class)
	ProjectionLifecycle projectionLifecycle(ProjectionEngine engine, ConfigurableListableBeanFactory beanFactory,
			ReadJournal readJournal, ObjectProvider<EventSerializer> serializer, ProjectionSettings defaults,
			ObjectProvider<MeterRegistry> meterRegistry, InMemoryCursors inMemoryCursors) {
		return new ProjectionLifecycle(engine, beanFactory, serializer.getIfAvailable(readJournal::serializer), defaults,
				meterRegistry.getIfUnique(), inMemoryCursors);
	}

}
