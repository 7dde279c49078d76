package io.cassandrajournal.spring.boot.embedded;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import org.apache.commons.logging.Log;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.EnvironmentPostProcessor;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.context.config.ConfigDataEnvironmentPostProcessor;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.logging.DeferredLogFactory;
import org.springframework.core.Ordered;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.util.ClassUtils;

import io.cassandrajournal.internal.CqlNames;
import io.cassandrajournal.spring.boot.autoconfigure.JournalCassandraProperties;

/**
 * With {@code journal.cassandra.embedded.enabled=true}: if nothing answers CQL on the configured contact
 * point (journal's, else Spring Boot's, else {@code 127.0.0.1:9042}) and every configured contact point is a
 * loopback address, starts a real Cassandra node there
 * through the project's launcher, creates the configured keyspace on it, and points
 * {@code spring.cassandra.*} (and {@code journal.cassandra.*} when set) at it. Runs after the application's
 * configuration files are read and before any bean is created. With a contact point elsewhere (a real
 * cluster) it does nothing: an outage then fails as it would without the embedded node.
 */
public final class EmbeddedCassandraEnvironmentPostProcessor implements EnvironmentPostProcessor, Ordered {

	private static final String LAUNCHER_CLASS = "io.cassandrajournal.launcher.CassandraNode";

	private final Log logger;

	public EmbeddedCassandraEnvironmentPostProcessor(DeferredLogFactory logFactory) {
		this.logger = logFactory.getLog(EmbeddedCassandraEnvironmentPostProcessor.class);
	}

	@Override
	public int getOrder() {
		return ConfigDataEnvironmentPostProcessor.ORDER + 10;
	}

	@Override
	public void postProcessEnvironment(ConfigurableEnvironment environment, SpringApplication application) {
		Binder binder = Binder.get(environment);
		JournalCassandraProperties.Embedded embedded = bindEmbedded(binder);
		if (!embedded.isEnabled()) {
			return;
		}
		if (!ClassUtils.isPresent(LAUNCHER_CLASS, application.getClassLoader())) {
			throw new IllegalStateException("journal.cassandra.embedded.enabled=true needs the launcher on the "
					+ "classpath: add the dependency io.cassandrajournal:cassandra-launcher (scope runtime; test if only tests "
					+ "use the embedded node). It is JDK-only: Cassandra's own jars stay off the application's classpath");
		}
		List<String> journalPoints = binder.bind("journal.cassandra.contact-points", String[].class)
			.map(List::of)
			.orElse(List.of());
		List<String> springPoints = binder.bind("spring.cassandra.contact-points", String[].class)
			.map(List::of)
			.orElse(List.of());
		String target = !journalPoints.isEmpty() ? journalPoints.get(0)
				: !springPoints.isEmpty() ? springPoints.get(0) : "127.0.0.1:9042";
		String host = target.contains(":") ? target.substring(0, target.lastIndexOf(':')) : target;
		int configuredPort = target.contains(":") ? Integer.parseInt(target.substring(target.lastIndexOf(':') + 1))
				: 9042;
		int port = (embedded.getPort() != null) ? embedded.getPort() : configuredPort;

		List<String> configured = !journalPoints.isEmpty() ? journalPoints : springPoints;
		String remote = firstNonLoopback(configured);
		if (remote != null) {
			// Never replace a real cluster: an outage of a remote contact point must fail as it would without the
			// embedded node, not switch the application to an empty local database.
			this.logger.info("journal.cassandra.embedded.enabled is set but the contact point " + remote + " is not a "
					+ "loopback address: no embedded node is started (it only stands in for 127.0.0.1 / localhost)");
			return;
		}
		if (embedded.getNodes() < 1) {
			throw new IllegalStateException("journal.cassandra.embedded.nodes is " + embedded.getNodes()
					+ ": set 1 for a single node or 2 to 9 for a local cluster");
		}
		if (embedded.getNodes() > 1) {
			startCluster(environment, embedded, !journalPoints.isEmpty());
			return;
		}
		InetSocketAddress contactPoint;
		if (port != 0 && EmbeddedCassandra.answers(host, port)) {
			this.logger.info("Cassandra already answers on " + host + ":" + port + "; not starting an embedded node");
			contactPoint = new InetSocketAddress(host, port);
		}
		else {
			Path directory = embedded.isTemporary() ? null : embedded.getDirectory();
			String maxHeap = embedded.getMaxHeap();
			Duration timeout = embedded.getStartupTimeout();
			long started = System.nanoTime();
			contactPoint = EmbeddedCassandra.start(port, directory, maxHeap, timeout);
			this.logger.info("Started an embedded Cassandra node on " + contactPoint.getHostString() + ":"
					+ contactPoint.getPort() + " in " + Duration.ofNanos(System.nanoTime() - started).toMillis() + " ms ("
					+ ((directory != null) ? "data in " + directory : "temporary data") + ")");
			if (embedded.isCreateKeyspace()) {
				createKeyspace(environment, contactPoint, 1);
			}
		}
		String point = contactPoint.getHostString() + ":" + contactPoint.getPort();
		Map<String, Object> properties = new HashMap<>();
		properties.put("spring.cassandra.contact-points", point);
		properties.put("spring.cassandra.local-datacenter", "datacenter1");
		if (!journalPoints.isEmpty()) {
			properties.put("journal.cassandra.contact-points", point);
			properties.put("journal.cassandra.local-datacenter", "datacenter1");
		}
		environment.getPropertySources().addFirst(new MapPropertySource("journalEmbeddedCassandra", properties));
	}

	private void startCluster(ConfigurableEnvironment environment, JournalCassandraProperties.Embedded embedded,
			boolean journalContactPoints) {
		if (embedded.getNodes() > 9) {
			throw new IllegalStateException("journal.cassandra.embedded.nodes is " + embedded.getNodes()
					+ ": a local cluster has at most 9 nodes (127.0.0.1 .. 127.0.0.9)");
		}
		if (embedded.getPort() != null || (embedded.getDirectory() != null && !embedded.isTemporary())) {
			this.logger.warn("journal.cassandra.embedded.port and .directory do not apply to a local cluster "
					+ "(journal.cassandra.embedded.nodes > 1): its nodes use free ports and temporary data");
		}
		long started = System.nanoTime();
		List<EmbeddedCassandra.Member> members = EmbeddedCassandra.startCluster(embedded.getNodes(),
				embedded.getMaxHeap(), embedded.getStartupTimeout());
		List<String> points = new ArrayList<>();
		List<String> described = new ArrayList<>();
		for (EmbeddedCassandra.Member member : members) {
			String point = member.contactPoint().getHostString() + ":" + member.contactPoint().getPort();
			points.add(point);
			described.add(point + " (pid " + member.pid() + ")");
		}
		this.logger.info("Started an embedded " + points.size() + "-node Cassandra cluster in "
				+ Duration.ofNanos(System.nanoTime() - started).toSeconds() + " s (temporary data, replication factor "
				+ Math.min(3, points.size()) + "): " + String.join(", ", described)
				+ ((points.size() >= 3) ? ". With a QUORUM consistency, killing one (kill -9 <pid>) leaves two of "
						+ "three replicas: the journal carries on." : "."));
		if (embedded.isCreateKeyspace()) {
			createKeyspace(environment, members.get(0).contactPoint(), Math.min(3, points.size()));
		}
		Map<String, Object> properties = new HashMap<>();
		properties.put("spring.cassandra.contact-points", String.join(",", points));
		properties.put("spring.cassandra.local-datacenter", "datacenter1");
		if (journalContactPoints) {
			properties.put("journal.cassandra.contact-points", String.join(",", points));
			properties.put("journal.cassandra.local-datacenter", "datacenter1");
		}
		environment.getPropertySources().addFirst(new MapPropertySource("journalEmbeddedCassandra", properties));
	}

	/**
	 * The one place the embedded node's keys are read: bound onto {@link JournalCassandraProperties.Embedded},
	 * whose field initialisers are their only defaults.
	 * @param binder the environment's binder
	 * @return {@code journal.cassandra.embedded.*}
	 */
	static JournalCassandraProperties.Embedded bindEmbedded(Binder binder) {
		return binder.bind("journal.cassandra.embedded", Bindable.of(JournalCassandraProperties.Embedded.class))
			.orElseGet(JournalCassandraProperties.Embedded::new);
	}

	/**
	 * @param contactPoints {@code host[:port]} entries
	 * @return the first entry whose host is not a loopback address (a name that does not resolve counts as not
	 * loopback), or {@code null} when every one is loopback (an empty list means the default 127.0.0.1:9042)
	 */
	static @Nullable String firstNonLoopback(List<String> contactPoints) {
		for (String point : contactPoints) {
			String host = point.trim();
			if (host.startsWith("[") && host.contains("]")) {
				host = host.substring(1, host.indexOf(']'));
			}
			else if (host.indexOf(':') == host.lastIndexOf(':') && host.contains(":")) {
				host = host.substring(0, host.indexOf(':'));
			}
			if (!isLoopback(host)) {
				return point;
			}
		}
		return null;
	}

	private static boolean isLoopback(String host) {
		if (host.isEmpty()) {
			return false;
		}
		try {
			for (InetAddress address : InetAddress.getAllByName(host)) {
				if (!address.isLoopbackAddress()) {
					return false;
				}
			}
			return true;
		}
		catch (UnknownHostException ex) {
			return false;
		}
	}

	private void createKeyspace(ConfigurableEnvironment environment, InetSocketAddress contactPoint,
			int replicationFactor) {
		String keyspace = environment.getProperty("journal.cassandra.keyspace",
				environment.getProperty("spring.cassandra.keyspace-name", ""));
		if (keyspace.isEmpty()) {
			return;
		}
		String name = CqlNames.check("journal.cassandra.keyspace", keyspace);
		// A fresh multi-node cluster takes longer than the driver's defaults (2 s per request, 10 s for schema
		// agreement) to create a keyspace and agree on it: one minute for each, the driver does the waiting.
		DriverConfigLoader config = DriverConfigLoader.programmaticBuilder()
			.withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofMinutes(1))
			.withDuration(DefaultDriverOption.CONTROL_CONNECTION_AGREEMENT_TIMEOUT, Duration.ofMinutes(1))
			.build();
		try (CqlSession session = CqlSession.builder()
			.withConfigLoader(config)
			.addContactPoint(contactPoint)
			.withLocalDatacenter("datacenter1")
			.build()) {
			ResultSet created = session.execute("CREATE KEYSPACE IF NOT EXISTS " + name
					+ " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': " + replicationFactor + "}");
			if (!created.getExecutionInfo().isSchemaInAgreement()) {
				this.logger.warn("The embedded Cassandra nodes did not agree on keyspace '" + name
						+ "' within a minute; the application's own schema checks will wait for it");
			}
		}
	}

}
