package io.cassandrajournal.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

import io.cassandrajournal.journal.JournalMetrics;
import io.cassandrajournal.journal.MicrometerJournalMetrics;

/**
 * Records journal meters ({@code journal.appends}, {@code journal.events.appended},
 * {@code journal.append.conflicts}, {@code journal.append.failures}, {@code journal.replays}) in the
 * application's {@link MeterRegistry}.
 */
@AutoConfiguration(before = CassandraJournalAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean(MeterRegistry.class)
public final class JournalMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	JournalMetrics journalMetrics(MeterRegistry registry) {
		return new MicrometerJournalMetrics(registry);
	}

}
