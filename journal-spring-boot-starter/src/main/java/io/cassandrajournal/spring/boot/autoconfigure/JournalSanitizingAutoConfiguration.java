package io.cassandrajournal.spring.boot.autoconfigure;

import java.util.Locale;
import java.util.regex.Pattern;

import org.springframework.boot.actuate.endpoint.SanitizableData;
import org.springframework.boot.actuate.endpoint.SanitizingFunction;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * Masks {@code journal.cassandra.password} in the {@code configprops} and {@code env} actuator endpoints even when
 * an application sets their {@code show-values} to {@code always}: Spring Boot then shows every value as it is,
 * and the journal's password would otherwise be one of them. Also masks it inside the command line
 * ({@code sun.java.command}, for {@code --journal.cassandra.password=...}) and hides
 * {@code spring.application.json} when that mentions a password.
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
		if (canonical.equals("journal.cassandra.password")) {
			return data.withSanitizedValue();
		}
		// Values that can carry it inside: the command line (java -jar app.jar --journal.cassandra.password=..)
		// and Spring Boot's JSON property source.
		if (data.getValue() instanceof String value && PASSWORD_INSIDE.matcher(value).find()) {
			if (canonical.equals("sun.java.command")) {
				return data.withValue(PASSWORD_ARGUMENT.matcher(value).replaceAll("$1" + SanitizableData.SANITIZED_VALUE));
			}
			if (canonical.equals("spring.application.json")) {
				return data.withSanitizedValue();
			}
		}
		return data;
	}

	private static final Pattern PASSWORD_INSIDE = Pattern.compile("(?i)password");

	/** {@code journal.cassandra.password=...} or {@code --journal.cassandra.password=...}, up to the next blank. */
	private static final Pattern PASSWORD_ARGUMENT = Pattern
		.compile("(?i)(journal[._-]cassandra[._-]password=)\\S*");

}
