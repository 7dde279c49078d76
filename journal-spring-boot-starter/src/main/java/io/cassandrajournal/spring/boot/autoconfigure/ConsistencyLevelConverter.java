package io.cassandrajournal.spring.boot.autoconfigure;

import java.util.Locale;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import org.springframework.core.convert.converter.Converter;

/**
 * Reads a consistency level by name ({@code LOCAL_QUORUM}, {@code local-quorum}) or, as the reference
 * implementation's configuration does, by the driver's numeric code ({@code 6}).
 */
final class ConsistencyLevelConverter implements Converter<String, DefaultConsistencyLevel> {

	@Override
	public DefaultConsistencyLevel convert(String source) {
		String value = source.trim();
		if (!value.isEmpty() && value.chars().allMatch(Character::isDigit)) {
			try {
				return DefaultConsistencyLevel.fromCode(Integer.parseInt(value));
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalArgumentException("Unknown consistency level code " + value + "; use a name such as "
						+ "LOCAL_QUORUM or a code from 0 (ANY) to 10 (LOCAL_ONE)");
			}
		}
		return DefaultConsistencyLevel.valueOf(value.toUpperCase(Locale.ROOT).replace('-', '_'));
	}

}
