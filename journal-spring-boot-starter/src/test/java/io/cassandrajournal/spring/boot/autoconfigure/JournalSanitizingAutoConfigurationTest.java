package io.cassandrajournal.spring.boot.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.actuate.endpoint.SanitizableData;

import static org.assertj.core.api.Assertions.assertThat;

class JournalSanitizingAutoConfigurationTest {

	@ParameterizedTest
	@ValueSource(strings = { "journal.cassandra.password", "JOURNAL_CASSANDRA_PASSWORD", "journal.cassandra.Password" })
	void masksEverySpellingOfTheJournalPassword(String key) {
		SanitizableData data = new SanitizableData(null, key, "s3cret");
		assertThat(JournalSanitizingAutoConfiguration.maskJournalPassword(data).getValue())
			.isEqualTo(SanitizableData.SANITIZED_VALUE);
	}

	@Test
	void leavesOtherKeysAlone() {
		SanitizableData data = new SanitizableData(null, "journal.cassandra.username", "app");
		assertThat(JournalSanitizingAutoConfiguration.maskJournalPassword(data).getValue()).isEqualTo("app");
	}

}
