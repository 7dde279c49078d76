package io.cassandrajournal.spring.boot.autoconfigure;


import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.projection.CassandraDeadLetterQueue;
import io.cassandrajournal.projection.DeadLetterQueue;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.OffsetStore;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.serialization.EventSerializer;
import io.cassandrajournal.spring.boot.projection.InMemoryCursors;
import io.cassandrajournal.spring.boot.projection.ProjectionLifecycle;
import io.cassandrajournal.state.DurableStateStore;

/**
 * The query side and the projection engine: a {@link CassandraReadJournal}, durable offsets in the durable
 * state table, a Cassandra dead-letter queue, the {@link ProjectionEngine}, and the lifecycle that runs
 * {@code @ProjectionHandler} methods ({@code journal.cassandra.projections.enabled}).
 */
@AutoConfiguration(after = { CassandraJournalAutoConfiguration.class, JournalMetricsAutoConfiguration.class },
		afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnBean({ JournalSession.class, Journal.class })
@ConditionalOnBooleanProperty(name = "journal.cassandra.projections.enabled", matchIfMissing = true)
public final class JournalProjectionsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	CassandraReadJournal cassandraReadJournal(Journal journal, JournalSession session, CassandraJournalOptions options,
			EventSerializer serializer) {
		return CassandraReadJournal.create(journal, session.session(), options, serializer);
	}

	@Bean
	@ConditionalOnMissingBean
	OffsetStore journalOffsetStore(DurableStateStore durableStateStore) {
		return new DurableStateOffsetStore(durableStateStore);
	}

	@Bean
	@ConditionalOnMissingBean
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
			.withFeed(new FeedSettings(p.getConsistencyWindow(), p.getBacktrackWindow(), p.getPageSize()));
	}

	@Bean
	@ConditionalOnMissingBean
	InMemoryCursors journalInMemoryCursors() {
		return new InMemoryCursors();
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	ProjectionEngine projectionEngine(Journal journal, CassandraReadJournal readJournal, OffsetStore offsetStore,
			InMemoryCursors inMemoryCursors, ObjectProvider<DeadLetterQueue> deadLetterQueue,
			ObjectProvider<MeterRegistry> meterRegistry, EventSerializer serializer, CassandraJournalOptions options,
			JournalCassandraProperties properties) {
		ProjectionEngine.Builder builder = engineBuilder(journal, properties).readJournal(readJournal)
			.serializer(serializer)
			// Durable cursors, except those of @ProjectionHandler(rebuildOnStart = true) projections.
			.offsetStore(inMemoryCursors.around(offsetStore))
			.deadLetterQueue(deadLetterQueue.getIfAvailable())
			.clock(options.clock());
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
	ProjectionLifecycle projectionLifecycle(ProjectionEngine engine, ConfigurableListableBeanFactory beanFactory,
			EventSerializer serializer, ProjectionSettings defaults, ObjectProvider<MeterRegistry> meterRegistry,
			InMemoryCursors inMemoryCursors) {
		return new ProjectionLifecycle(engine, beanFactory, serializer, defaults, meterRegistry.getIfUnique(),
				inMemoryCursors);
	}


}
