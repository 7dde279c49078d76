package io.cassandrajournal.spring.boot.autoconfigure;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.spring.boot.health.JournalHealthIndicator;

/**
 * Registers the {@code journal} health contributor ({@code management.health.journal.enabled}).
 */
@AutoConfiguration(after = CassandraJournalAutoConfiguration.class)
@ConditionalOnClass(HealthIndicator.class)
@ConditionalOnBean({ JournalSession.class, CassandraJournalOptions.class })
@ConditionalOnEnabledHealthIndicator("journal")
public final class JournalHealthContributorAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "journalHealthIndicator")
	JournalHealthIndicator journalHealthIndicator(JournalSession session, CassandraJournalOptions options) {
		return new JournalHealthIndicator(session.session(), options);
	}

}
