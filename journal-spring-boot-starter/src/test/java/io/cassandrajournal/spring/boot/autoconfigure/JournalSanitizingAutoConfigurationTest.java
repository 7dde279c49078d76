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

	@Test
	void masksThePasswordInsideTheCommandLineAndHidesJsonThatHoldsOne() {
		SanitizableData command = new SanitizableData(null, "sun.java.command",
				"app.jar --server.port=0 --journal.cassandra.password=s3cret --journal.cassandra.username=app");
		assertThat(JournalSanitizingAutoConfiguration.maskJournalPassword(command).getValue())
			.isEqualTo("app.jar --server.port=0 --journal.cassandra.password=" + SanitizableData.SANITIZED_VALUE
					+ " --journal.cassandra.username=app");
		SanitizableData json = new SanitizableData(null, "spring.application.json",
				"{\"journal\":{\"cassandra\":{\"password\":\"s3cret\"}}}");
		assertThat(JournalSanitizingAutoConfiguration.maskJournalPassword(json).getValue())
			.isEqualTo(SanitizableData.SANITIZED_VALUE);
	}

}
