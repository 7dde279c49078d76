package io.cassandrajournal;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.auth.AuthenticationException;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.ssl.ProgrammaticSslEngineFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Opens a driver session from the connection part of {@link CassandraJournalOptions}: contact points,
 * local data center, credentials, TLS and request timeout. Applications that already have a session (for
 * example Spring Boot's) pass that one to the stores instead.
 */
public final class CassandraSessions {

	private static final Logger logger = LoggerFactory.getLogger(CassandraSessions.class);

	private CassandraSessions() {
	}

	/**
	 * Opens a session, trying again with a growing pause (250 ms up to 5 s) while no contact point answers,
	 * for up to {@link CassandraJournalOptions#startupWait()}; each failed attempt is logged as a warning.
	 * @param options options with at least one contact point and the local data center
	 * @return an open session; the caller closes it
	 * @throws IllegalArgumentException if contact points or the local data center are missing
	 * @throws AllNodesFailedException if no node answered within the wait, or a node refused the credentials
	 */
	public static CqlSession open(CassandraJournalOptions options) {
		long deadline = System.nanoTime() + options.startupWait().toNanos();
		Duration pause = Duration.ofMillis(250);
		for (int attempt = 1;; attempt++) {
			try {
				return build(options);
			}
			catch (AllNodesFailedException ex) {
				long left = deadline - System.nanoTime();
				if (left <= 0 || refusedCredentials(ex)) {
					throw ex;
				}
				logger.warn("Cassandra at {} does not answer yet (attempt {}, waiting up to {} ms more, "
						+ "journal.cassandra.startup-wait): {}", options.contactPoints(), attempt,
						TimeUnit.NANOSECONDS.toMillis(left), ex.getMessage());
				try {
					Thread.sleep(Math.min(pause.toMillis(), TimeUnit.NANOSECONDS.toMillis(left) + 1));
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					throw ex;
				}
				pause = (pause.compareTo(Duration.ofSeconds(5)) < 0) ? pause.multipliedBy(2) : pause;
			}
		}
	}

	private static boolean refusedCredentials(AllNodesFailedException ex) {
		return ex.getAllErrors().values().stream().flatMap(List::stream)
			.anyMatch((error) -> error instanceof AuthenticationException);
	}

	private static CqlSession build(CassandraJournalOptions options) {
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
		// The driver's withSslContext(..) does not check host names; this factory does unless told not to.
		options.sslContext()
			.ifPresent((context) -> builder.withSslEngineFactory(
					new ProgrammaticSslEngineFactory(context, null, options.sslHostnameValidation())));
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
