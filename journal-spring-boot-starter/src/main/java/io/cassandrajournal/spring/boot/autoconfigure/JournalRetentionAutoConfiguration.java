package io.cassandrajournal.spring.boot.autoconfigure;

import java.time.Clock;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.retention.JournalCleanup;
import io.cassandrajournal.retention.RetentionPolicy;
import io.cassandrajournal.retention.RetentionRunner;
import io.cassandrajournal.spring.boot.actuate.RetentionEndpoint;
import io.cassandrajournal.snapshot.SnapshotStore;
import io.cassandrajournal.state.DurableStateStore;

/**
 * Retention (issue 18): {@link JournalCleanup}, a {@link RetentionPolicy} from {@code journal.cassandra.retention.*}
 * and a {@link RetentionRunner}; the {@code retention} actuator endpoint, whose access is none by default.
 * Nothing here deletes anything unless called.
 */
@AutoConfiguration(after = CassandraJournalAutoConfiguration.class)
@ConditionalOnBean({ CassandraJournal.class, JournalSession.class, DurableStateStore.class })
@EnableConfigurationProperties(JournalRetentionProperties.class)
public final class JournalRetentionAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	JournalCleanup journalCleanup(JournalSession session, CassandraJournal journal,
			ObjectProvider<SnapshotStore> snapshots, ObjectProvider<DurableStateStore> states) {
		// Created first, so their tables exist when the cleanup looks for them.
		snapshots.getIfAvailable();
		states.getIfAvailable();
		return JournalCleanup.create(session.session(), journal);
	}

	@Bean
	@ConditionalOnMissingBean
	RetentionPolicy retentionPolicy(JournalRetentionProperties properties) {
		return RetentionPolicy.NONE.withKeepSnapshots(properties.getKeepSnapshots())
			.withTagBucketsOlderThan(properties.getTagBucketsOlderThan())
			.withParallelism(properties.getParallelism())
			.withPageSize(properties.getPageSize());
	}

	@Bean
	@ConditionalOnMissingBean
	RetentionRunner retentionRunner(JournalCleanup cleanup, DurableStateStore positions, CassandraJournalOptions options) {
		Clock clock = options.clock();
		return RetentionRunner.create(cleanup, positions, clock);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(Endpoint.class)
	@ConditionalOnAvailableEndpoint(RetentionEndpoint.class)
	static class EndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		RetentionEndpoint retentionEndpoint(RetentionRunner runner, RetentionPolicy policy) {
			return new RetentionEndpoint(runner, policy);
		}

	}

}
