package io.cassandrajournal.spring.boot.autoconfigure;

import java.util.Locale;

import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Masks {@code journal.cassandra.password} in the {@code configprops} and {@code env} actuator endpoints even when
 * an application sets their {@code show-values} to {@code always}: Spring Boot then shows every value as it is,
 * and the journal's password would otherwise be one of them.
 */
@AutoConfiguration
@ConditionalOnClass(SanitizingFunction.class)
public final class JournalSanitizingAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "journalPasswordSanitizer")
	SanitizingFunction journalPasswordSanitizer() {
		return JournalSanitizingAutoConfiguration::maskJournalPassword;
	}

	static SanitizableData maskJournalPassword(SanitizableData data) {
		String key = data.getKey();
		if (key == null) {
			return data;
		}
		// "journal.cassandra.password", its environment-variable form JOURNAL_CASSANDRA_PASSWORD, and the
		// camel-case or dashed spellings that relaxed binding accepts.
		String canonical = key.toLowerCase(Locale.ROOT).replace("_", ".").replace("-", "");
		return canonical.equals("journal.cassandra.password") ? data.withSanitizedValue() : data;
	}

}
