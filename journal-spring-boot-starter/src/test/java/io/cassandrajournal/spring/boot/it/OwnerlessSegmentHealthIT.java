package io.cassandrajournal.spring.boot.it;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.projection.ProjectionState;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.spring.boot.health.ProjectionsHealthIndicator;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A crashed owner on a real node: its lease rows were written once and are never renewed nor released (the
 * process died). This instance shares the projection but does not run it (not started), so nobody takes the
 * segments over, and its health must turn DOWN one lease timeout after the owner's last heartbeat: not before,
 * and at most {@link #BOUND} later (probe every 100 ms, plus a lease-row read on a shared machine). Lease timeout
 * 3 s, renewal 1 s.
 */
@CassandraTest
class OwnerlessSegmentHealthIT {

	private static final Duration LEASE_TIMEOUT = Duration.ofSeconds(3);

	private static final Duration BOUND = Duration.ofMillis(1500);

	private static final List<String> RANGES = List.of("0-255", "256-511", "512-767", "768-1023");

	@Test
	@SuppressWarnings("unchecked")
	void aSegmentWhoseOwnerCrashedTurnsTheHealthDownOneLeaseTimeoutAfterItsLastHeartbeat(TestKeyspace keyspace) {
		CqlSession session = keyspace.session();
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name())
			.withUseTagIndex(true);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal journal = CassandraJournal.create(session, options, serializer);
		try (ProjectionEngine engine = ProjectionEngine.builder(journal)
			.readJournal(CassandraReadJournal.create(journal, session, options, serializer))
			.offsetStore(new DurableStateOffsetStore(CassandraDurableStateStore.create(session, options, serializer)))
			.sharing(ProjectionSharing.create(session, options).withInstanceId("observer")
				.withLeaseTiming(LEASE_TIMEOUT, Duration.ofSeconds(1)))
			.build()) {
			engine.register(Projection.byTag("orders", TagFilter.tag("order"), String.class,
					EventHandler.blocking((event) -> {
					}), ProjectionSettings.defaults().withSegments(4)));
			ProjectionsHealthIndicator indicator = new ProjectionsHealthIndicator(engine,
					EnumSet.of(ProjectionState.FAILED), LEASE_TIMEOUT);

			long crashed = System.nanoTime();
			for (String range : RANGES) {
				session.execute("INSERT INTO " + keyspace.name() + "." + options.durableStateTable() + "_leases"
						+ " (projection, segment, owner, epoch, beat) VALUES ('orders', '" + range
						+ "', 'crashed-instance', 1, 42)");
			}
			AtomicLong downAt = new AtomicLong();
			Health down = await().alias("health DOWN within the lease timeout + " + BOUND.toMillis() + " ms")
				.atMost(LEASE_TIMEOUT.plus(BOUND))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> {
					Health health = indicator.health(true);
					downAt.set(System.nanoTime());
					return health;
				}, (health) -> Status.DOWN.equals(health.getStatus()));

			// The probe that first said DOWN ended no earlier than the lease timeout after the last heartbeat.
			Duration after = Duration.ofNanos(downAt.get() - crashed);
			System.out.printf("Health DOWN %d ms after the crashed owner's last heartbeat (lease timeout %d ms)%n",
					after.toMillis(), LEASE_TIMEOUT.toMillis());
			assertThat(after).isGreaterThanOrEqualTo(LEASE_TIMEOUT);
			Map<String, List<Map<String, Object>>> ownerless = (Map<String, List<Map<String, Object>>>) down
				.getDetails().get("ownerlessSegments");
			assertThat(ownerless.get("orders")).extracting((segment) -> segment.get("range"))
				.containsExactlyInAnyOrderElementsOf(RANGES);
			assertThat(ownerless.get("orders")).allSatisfy((segment) -> {
				assertThat(segment).containsEntry("lastOwner", "crashed-instance");
				assertThat((Long) segment.get("ownerlessForMillis")).isGreaterThan(LEASE_TIMEOUT.toMillis());
			});
		}
	}

}
