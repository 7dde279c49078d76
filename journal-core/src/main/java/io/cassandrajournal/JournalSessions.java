package io.cassandrajournal;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;

/**
 * Opens a driver session from the connection part of {@link CassandraJournalOptions}: contact points,
 * local data center, credentials, TLS and request timeout. Applications that already have a session (for
 * example Spring Boot's) pass that one to the stores instead.
 */
public final class JournalSessions {

	private JournalSessions() {
	}

	/**
	 * @param options options with at least one contact point and the local data center
	 * @return an open session; the caller closes it
	 * @throws IllegalArgumentException if contact points or the local data center are missing
	 */
	public static CqlSession open(CassandraJournalOptions options) {
		if (options.contactPoints().isEmpty()) {
			throw new IllegalArgumentException("contactPoints is empty: set at least one host:port "
					+ "(property journal.cassandra.contact-points)");
		}
		String datacenter = options.localDatacenter().orElseThrow(() -> new IllegalArgumentException(
				"localDatacenter is not set: the driver needs it with explicit contact points "
						+ "(property journal.cassandra.local-datacenter, for example datacenter1)"));
		CqlSessionBuilder builder = CqlSession.builder()
			.addContactPoints(parse(options.contactPoints()))
			.withLocalDatacenter(datacenter)
			.withConfigLoader(DriverConfigLoader.programmaticBuilder()
				.withDuration(DefaultDriverOption.REQUEST_TIMEOUT, options.requestTimeout())
				.build());
		if (options.username().isPresent()) {
			builder.withAuthCredentials(options.username().get(), options.password().orElse(""));
		}
		options.sslContext().ifPresent(builder::withSslContext);
		return builder.build();
	}

	static List<InetSocketAddress> parse(List<String> contactPoints) {
		List<InetSocketAddress> addresses = new ArrayList<>();
		for (String point : contactPoints) {
			String trimmed = point.trim();
			int colon = trimmed.lastIndexOf(':');
			if (colon > 0 && trimmed.indexOf(':') == colon) {
				addresses.add(new InetSocketAddress(trimmed.substring(0, colon),
						Integer.parseInt(trimmed.substring(colon + 1))));
			}
			else {
				addresses.add(new InetSocketAddress(trimmed, 9042));
			}
		}
		return addresses;
	}

}
