package io.cassandrajournal.testsupport;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.CqlSessionBuilder;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.config.ProgrammaticDriverConfigLoaderBuilder;
import org.jspecify.annotations.Nullable;

/**
 * Driver sessions tuned for tests: no schema-metadata debounce (it adds about a second per DDL statement),
 * fast reconnection for restart tests, and a request timeout that tolerates a busy 2-core machine.
 */
public final class TestSessions {

	private TestSessions() {
	}

	/**
	 * Opens a session.
	 * @param contactPoints the nodes to contact
	 * @param datacenter the local data center
	 * @param keyspace the keyspace to use, or {@code null}
	 * @return an open session; the caller closes it
	 */
	public static CqlSession open(List<InetSocketAddress> contactPoints, String datacenter,
			@Nullable String keyspace) {
		return open(contactPoints, datacenter, keyspace, testConfig());
	}

	/**
	 * Opens a session with options of the caller's (start from {@link #testConfig()}).
	 * @param contactPoints the nodes to contact
	 * @param datacenter the local data center
	 * @param keyspace the keyspace to use, or {@code null}
	 * @param config the driver options
	 * @return an open session; the caller closes it
	 */
	public static CqlSession open(List<InetSocketAddress> contactPoints, String datacenter,
			@Nullable String keyspace, ProgrammaticDriverConfigLoaderBuilder config) {
		CqlSessionBuilder builder = CqlSession.builder()
			.addContactPoints(contactPoints)
			.withLocalDatacenter(datacenter)
			.withConfigLoader(config.build());
		if (keyspace != null) {
			builder.withKeyspace(keyspace);
		}
		return builder.build();
	}

	/** @return the driver options every test session uses, for callers that add their own */
	public static ProgrammaticDriverConfigLoaderBuilder testConfig() {
		return DriverConfigLoader.programmaticBuilder()
			.withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ZERO)
			.withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(20))
			.withDuration(DefaultDriverOption.CONNECTION_INIT_QUERY_TIMEOUT, Duration.ofSeconds(10))
			.withDuration(DefaultDriverOption.CONTROL_CONNECTION_TIMEOUT, Duration.ofSeconds(10))
			.withDuration(DefaultDriverOption.METADATA_SCHEMA_REQUEST_TIMEOUT, Duration.ofSeconds(20))
			.withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(200))
			.withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(2));
	}

}
