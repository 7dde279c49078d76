package io.cassandrajournal.spring.boot.autoconfigure;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

import io.cassandrajournal.retention.RetentionPolicy;

import static org.assertj.core.api.Assertions.assertThat;

/** Every {@code journal.cassandra.retention.*} key arrives in the policy the retention endpoint runs. */
class JournalRetentionPropertiesTest {

	@Test
	void everyKeyArrivesInThePolicy() {
		Map<String, String> values = Map.of("journal.cassandra.retention.keep-snapshots", "3",
				"journal.cassandra.retention.tag-buckets-older-than", "30d", "journal.cassandra.retention.parallelism",
				"2", "journal.cassandra.retention.page-size", "25");
		JournalRetentionProperties bound = new Binder(new MapConfigurationPropertySource(values))
			.bindOrCreate("journal.cassandra.retention", JournalRetentionProperties.class);
		RetentionPolicy policy = new JournalRetentionAutoConfiguration().retentionPolicy(bound);
		assertThat(policy.keepSnapshots()).isEqualTo(3);
		assertThat(policy.tagBucketsOlderThan()).contains(Duration.ofDays(30));
		assertThat(policy.parallelism()).isEqualTo(2);
		assertThat(policy.pageSize()).isEqualTo(25);
	}

	@Test
	void unsetKeysKeepThePolicysDefaults() {
		RetentionPolicy policy = new JournalRetentionAutoConfiguration().retentionPolicy(new JournalRetentionProperties());
		assertThat(policy.keepSnapshots()).isEqualTo(RetentionPolicy.NONE.keepSnapshots());
		assertThat(policy.tagBucketsOlderThan()).isEmpty();
		assertThat(policy.parallelism()).isEqualTo(RetentionPolicy.NONE.parallelism());
		assertThat(policy.pageSize()).isEqualTo(RetentionPolicy.NONE.pageSize());
	}

}
