package io.cassandrajournal.spring.boot.it;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.stereotype.Component;
import tools.jackson.databind.json.JsonMapper;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.spring.boot.autoconfigure.JournalSession;
import io.cassandrajournal.spring.boot.projection.ProjectionHandler;
import io.cassandrajournal.spring.boot.projection.TestEvents;
import io.cassandrajournal.testsupport.SharedCassandra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Two application contexts (two instances of one service) share a projection of 4 segments through
 * {@code journal.cassandra.projections.sharing.*} on a real node: each owns some segments, both endpoints show the
 * same owners, every event is handled, the health is UP and the per-segment meters add up to one owner per segment;
 * when one context closes, its segments are handed over to the other, which then handles new events of every
 * segment. Lease timeout 3 s, renewal 1 s; every wait is bounded (60 s, the hand-over 30 s: a graceful stop
 * releases the leases at once, so it takes about one renewal interval).
 */
class SharedProjectionIT {

	private static final String PROJECTION = "shared-orders";

	private final HttpClient http = HttpClient.newHttpClient();

	private final JsonMapper json = JsonMapper.builder().build();

	@Test
	void twoInstancesShareTheSegmentsAndOneTakesOverWhenTheOtherStops() throws Exception {
		String keyspace = SharedCassandra.createKeyspace("sharing");
		try (ConfigurableApplicationContext a = start(keyspace, "instance-a")) {
			ConfigurableApplicationContext b = start(keyspace, "instance-b");
			try {
				// The owners the wait saw are the ones the events are checked against (a second read could differ).
				Map<String, String> owners = await()
					.alias("every segment owned, by both instances, the same on both endpoints")
					.atMost(Duration.ofSeconds(60))
					.ignoreException(NoAnswer.class)
					.until(() -> sameOwners(a, b), (o) -> o.size() == 4
							&& Set.copyOf(o.values()).equals(Set.of("instance-a", "instance-b")));
				assertThat(segments(a)).allSatisfy((segment) -> assertThat(((Number) segment.get("epoch")).longValue())
					.isPositive());

				List<String> first = ids("order");
				append(a, first);
				await().alias("every event handled by one of the instances").atMost(Duration.ofSeconds(60))
					.until(() -> handled(a, b).containsAll(first));
				for (String id : first) {
					String owner = owners.get(range(id));
					assertThat(handledBy(owner.equals("instance-a") ? a : b)).as(id + " handled by its owner " + owner)
						.contains(id);
				}
				assertThat(handledBy(a)).as("instance-a handled some").isNotEmpty();
				assertThat(handledBy(b)).as("instance-b handled some").isNotEmpty();

				assertThat(ownedGauges(a) + ownedGauges(b)).as("one owner per segment in the meters").isEqualTo(4.0);
				assertThat(a.getBean(MeterRegistry.class).find("persistence.projection.segment.owned")
					.tag("projection", PROJECTION).gauges()).extracting((g) -> g.getId().getTag("segment"))
					.containsExactlyInAnyOrder("0-255", "256-511", "512-767", "768-1023");
				Map<String, Object> health = get(a, "/actuator/health/projections");
				assertThat(health).containsEntry("status", "UP");
				assertThat(((Map<?, ?>) health.get("details")).containsKey("ownerlessSegments")).isFalse();
			}
			finally {
				b.close();
			}

			await().alias("instance-b's segments handed over to instance-a").atMost(Duration.ofSeconds(30))
				.ignoreException(NoAnswer.class)
				.until(() -> Set.copyOf(owners(a).values()).equals(Set.of("instance-a"))
						&& segments(a).stream().allMatch((s) -> Boolean.TRUE.equals(s.get("runsHere"))));
			assertThat(ownedGauges(a)).isEqualTo(4.0);
			List<String> second = ids("later");
			append(a, second);
			await().alias("instance-a alone handles new events of every segment").atMost(Duration.ofSeconds(60))
				.until(() -> handledBy(a).containsAll(second));
			assertThat(get(a, "/actuator/health/projections")).containsEntry("status", "UP");
		}
	}

	/**
	 * A member that beats but never takes its segments (a live instance stuck before its takes, as a test double
	 * written straight into the members table): instance-a hands it its share, those segments stay without an
	 * owner, and once that lasts longer than the lease timeout (3 s) the health turns DOWN naming them; when the
	 * member stops beating, instance-a takes them and the health is UP again. Waits bounded by 30 s.
	 */
	@Test
	void aSegmentWithoutOwnerPastTheLeaseTimeoutTurnsTheHealthDown() throws Exception {
		String keyspace = SharedCassandra.createKeyspace("ownerless");
		try (ConfigurableApplicationContext a = start(keyspace, "instance-a")) {
			await().atMost(Duration.ofSeconds(30)).until(() -> owners(a).size() == 4);
			CqlSession session = a.getBean(JournalSession.class).session();
			ScheduledExecutorService ghost = Executors.newSingleThreadScheduledExecutor();
			try {
				// Each beat catches its own failure: a periodic task that throws is never run again, so one beat
				// that timed out on a loaded node (the driver's default timeout is 2 s) would end the ghost.
				ghost.scheduleAtFixedRate(() -> {
					try {
						session.execute(SimpleStatement.newInstance("INSERT INTO " + keyspace
								+ ".durable_state_members (projection, member, beat) VALUES (?, ?, ?) USING TTL 30",
								PROJECTION, "ghost", ThreadLocalRandom.current().nextLong()));
					}
					catch (RuntimeException ex) {
						System.out.println("The ghost's beat failed (it beats again in 300 ms): " + ex);
					}
				}, 0, 300, TimeUnit.MILLISECONDS);
				// The health that turned DOWN is the one checked (a second request could answer differently).
				Map<String, Object> health = await().alias("health DOWN naming the ghost's segments")
					.atMost(Duration.ofSeconds(30))
					.ignoreException(NoAnswer.class)
					.until(() -> get(a, "/actuator/health/projections"), (h) -> "DOWN".equals(h.get("status")));
				Map<?, ?> ownerless = (Map<?, ?>) ((Map<?, ?>) health.get("details")).get("ownerlessSegments");
				assertThat(ownerless).as("DOWN for a segment without an owner: %s", health).isNotNull();
				assertThat((List<?>) ownerless.get(PROJECTION)).isNotEmpty().hasSizeLessThan(4);
				assertThat(segments(a)).filteredOn((s) -> s.get("owner") == null).isNotEmpty()
					.allSatisfy((s) -> assertThat(((Number) s.get("ownerlessForMillis")).longValue()).isPositive());
			}
			finally {
				ghost.shutdownNow();
			}
			await().alias("instance-a takes the ghost's segments and the health is UP").atMost(Duration.ofSeconds(30))
				.ignoreException(NoAnswer.class)
				.until(() -> owners(a).size() == 4
						&& "UP".equals(get(a, "/actuator/health/projections").get("status")));
		}
	}

	/**
	 * @param prefix the ids' prefix
	 * @return 20 persistenceIds, 5 in each segment's range (Java's String hash of similar ids clusters, so
	 * consecutive ids could all fall in one range)
	 */
	private static List<String> ids(String prefix) {
		Map<String, Integer> perRange = new HashMap<>();
		List<String> ids = new ArrayList<>();
		for (int i = 0; ids.size() < 20; i++) {
			String id = prefix + "-" + i;
			if (perRange.merge(range(id), 1, Integer::sum) <= 5) {
				ids.add(id);
			}
		}
		return ids;
	}

	/** @return the range of 4 segments an id falls in: its slice by a new keyspace's slice-hash (murmur3) */
	private static String range(String persistenceId) {
		int from = (CassandraJournalOptions.create().sliceHash().slice(persistenceId) / 256) * 256;
		return from + "-" + (from + 255);
	}

	private static void append(ConfigurableApplicationContext context, List<String> ids) {
		Journal journal = context.getBean(Journal.class);
		for (String id : ids) {
			journal.append(id, 0, List.of(EventToAppend.of(new TestEvents.Deposited(1), "shared"))).toCompletableFuture().join();
		}
	}

	private static ConfigurableApplicationContext start(String keyspace, String instanceId) {
		InetSocketAddress point = SharedCassandra.contactPoints().get(0);
		return new SpringApplicationBuilder(SharingApplication.class).properties(
				"spring.cassandra.contact-points=" + point.getHostString() + ":" + point.getPort(),
				"spring.cassandra.local-datacenter=datacenter1", "journal.cassandra.keyspace=" + keyspace,
				"journal.cassandra.use-tag-index=true", "journal.cassandra.projections.poll-interval=200ms",
				"journal.cassandra.projections.sharing.enabled=true",
				"journal.cassandra.projections.sharing.instance-id=" + instanceId,
				"journal.cassandra.projections.sharing.lease-timeout=3s",
				"journal.cassandra.projections.sharing.renew-interval=1s", "server.port=0",
				"management.endpoints.web.exposure.include=health,projections",
				"management.endpoint.health.show-details=always", "spring.jmx.enabled=false")
			.run();
	}

	/**
	 * @return each segment as the instance's endpoint shows it, with the lease rows read from Cassandra
	 * @throws NoAnswer if the endpoint failed (500) or could not read the lease rows ({@code segmentsError}: then it
	 * shows only what this instance holds, so the owners of the others are missing): a Cassandra request that
	 * failed under load, which a wait may outlast, not a view of the segments to check
	 */
	@SuppressWarnings("unchecked")
	private List<Map<String, Object>> segments(ConfigurableApplicationContext context) throws Exception {
		Map<String, Object> body = get(context, "/actuator/projections/" + PROJECTION);
		if (!body.containsKey("segments") || body.containsKey("segmentsError")) {
			throw new NoAnswer("/actuator/projections/" + PROJECTION + " answered without the lease rows: " + body);
		}
		return (List<Map<String, Object>>) body.get("segments");
	}

	/** @return the owners both instances' endpoints show, or none while they differ */
	private Map<String, String> sameOwners(ConfigurableApplicationContext a, ConfigurableApplicationContext b)
			throws Exception {
		Map<String, String> owners = owners(a);
		return owners.equals(owners(b)) ? owners : Map.of();
	}

	/** @return each segment's range and owner, as the instance's endpoint shows them */
	private Map<String, String> owners(ConfigurableApplicationContext context) throws Exception {
		return segments(context).stream()
			.filter((s) -> s.get("owner") != null)
			.collect(Collectors.toMap((s) -> (String) s.get("range"), (s) -> (String) s.get("owner")));
	}

	private static double ownedGauges(ConfigurableApplicationContext context) {
		return context.getBean(MeterRegistry.class).find("persistence.projection.segment.owned")
			.tag("projection", PROJECTION).gauges().stream().mapToDouble(Gauge::value).sum();
	}

	private static List<String> handledBy(ConfigurableApplicationContext context) {
		return context.getBean(SharingApplication.Orders.class).handled;
	}

	private static Set<String> handled(ConfigurableApplicationContext a, ConfigurableApplicationContext b) {
		Set<String> all = new HashSet<>(handledBy(a));
		all.addAll(handledBy(b));
		return all;
	}

	@SuppressWarnings("unchecked")
	private Map<String, Object> get(ConfigurableApplicationContext context, String path) throws Exception {
		int port = ((WebServerApplicationContext) context).getWebServer().getPort();
		HttpResponse<String> response = this.http.send(
				HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
		Map<String, Object> body = this.json.readValue(response.body(), Map.class);
		// 503 is a DOWN health; anything else but 200 is a failed request (body: status, error, path).
		if (response.statusCode() != 200 && response.statusCode() != 503) {
			throw new NoAnswer(path + " answered " + response.statusCode() + ": " + body);
		}
		return body;
	}

	/** An endpoint that did not answer with what the test reads (a failed request, or a failed read inside it). */
	static final class NoAnswer extends RuntimeException {

		NoAnswer(String message) {
			super(message);
		}

	}

	/** One service instance: a by-tag projection of 4 segments. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class SharingApplication {

		@Component
		static class Orders {

			final List<String> handled = new CopyOnWriteArrayList<>();

			@ProjectionHandler(name = PROJECTION, tag = "shared", segments = 4)
			void on(PersistentEvent<TestEvents.Deposited> event) {
				this.handled.add(event.persistenceId());
			}

		}

	}

}
