package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A projection of 16 segments shared by 3 instances, with the reference tag layout ({@code tag-slice-groups} 0:
 * every segment reads the whole tag and keeps its slices) and with the segment-aware index (16 groups: each
 * segment reads its own group's partition): once the segments are settled on their owners, every event appended
 * is handled exactly once, by the instance that owns its segment, in order per entity. Each layout has tables of
 * its own in the class's keyspace (events, metadata and tag index named after it), so both run on one node.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlicedSharedProjectionIT {

	private static final int SEGMENTS = 16;

	private static final List<String> INSTANCES = List.of("a", "b", "c");

	private TestKeyspace keyspace;

	@BeforeAll
	void keyspace(TestKeyspace keyspace) {
		this.keyspace = keyspace;
	}

	@ParameterizedTest(name = "tag-slice-groups {0}")
	@ValueSource(ints = { 0, 16 })
	void everyEventIsHandledOnceByItsSegmentsOwner(int groups) {
		CassandraJournalOptions options = CassandraJournalOptions.create()
			.withKeyspace(this.keyspace.name())
			.withEventsTable("events_g" + groups)
			.withMetadataTable("metadata_g" + groups)
			.withTagIndexTable("tags_g" + groups)
			.withUseTagIndex(true)
			.withTagSliceGroups(groups);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), options, serializer);
		CassandraReadJournal query = CassandraReadJournal.create(journal, this.keyspace.session(), options, serializer);
		CassandraDurableStateStore state = CassandraDurableStateStore.create(this.keyspace.session(), options,
				serializer);
		LeaseTable leases = LeaseTable.create(this.keyspace.session(), options);
		String tag = "sliced-shared-" + groups + "-" + System.nanoTime();
		String name = "balances-" + groups;
		// Who handled each event: "pid#seq" -> instances, in handling order.
		Map<String, List<String>> handledBy = new ConcurrentHashMap<>();
		Map<String, Long> lastSeen = new ConcurrentHashMap<>();
		AtomicInteger outOfOrder = new AtomicInteger();
		List<ProjectionEngine> engines = new ArrayList<>();
		for (String instance : INSTANCES) {
			ProjectionEngine engine = ProjectionEngine.builder(journal)
				.readJournal(query)
				.offsetStore(new DurableStateOffsetStore(state))
				.sharing(ProjectionSharing.create(this.keyspace.session(), options)
					.withInstanceId(instance)
					.withLeaseTiming(Duration.ofSeconds(3), Duration.ofMillis(500)))
				.build();
			engine.register(Projection.byTag(name, TagFilter.tag(tag), AccountEvent.class,
					EventHandler.blocking((event) -> {
						handledBy.computeIfAbsent(event.persistenceId() + "#" + event.sequenceNr(),
								(k) -> new CopyOnWriteArrayList<>()).add(instance);
						Long before = lastSeen.put(event.persistenceId(), event.sequenceNr());
						if (event.sequenceNr() != ((before == null) ? 1 : before + 1)) {
							outOfOrder.incrementAndGet();
						}
					}),
					ProjectionSettings.defaults().withSegments(SEGMENTS).withPollInterval(Duration.ofMillis(100))
						.withFeed(new FeedSettings(Duration.ZERO, Duration.ofSeconds(1), 50))));
			engines.add(engine);
		}
		try {
			engines.forEach(ProjectionEngine::startAll);
			List<String> keys = SliceRange.split(SEGMENTS).stream().map(SliceRange::key).toList();
			Map<String, String> expected = Rendezvous.assign(name, keys, INSTANCES);
			// Bound: members count as live after their second beat, then each takes or hands over on its next
			// renewal (500 ms): well within 20 s.
			await("each segment owned by its rendezvous winner").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> owners(leases, name, keys).equals(expected));
			// Entities with name-based UUIDs, which spread over the 16 segments.
			List<String> ids = new ArrayList<>();
			for (int e = 0; e < 64; e++) {
				ids.add(tag + "-" + UUID.nameUUIDFromBytes((tag + e).getBytes()));
			}
			Map<String, String> ownerOf = new HashMap<>();
			for (String id : ids) {
				SliceRange range = SliceRange.split(SEGMENTS).stream().filter((r) -> r.contains(query.sliceOf(id))).findFirst()
					.orElseThrow();
				ownerOf.put(id, expected.get(range.key()));
			}
			assertThat(ownerOf.values()).as("the entities reach every instance").containsAll(INSTANCES);
			for (int round = 0; round < 5; round++) {
				for (String id : ids) {
					result(journal.append(id, round, List.of(EventToAppend.of(new Deposited(round + 1), tag))));
				}
			}
			int events = ids.size() * 5;
			// Bound: each segment polls every 100 ms; 320 events in batches of 50 are handled within a few seconds.
			await("every event handled").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
				.until(() -> handledBy.size() == events);
			assertThat(owners(leases, name, keys)).as("no owner changed while handling").isEqualTo(expected);
			handledBy.forEach((event, by) -> {
				String id = event.substring(0, event.lastIndexOf('#'));
				assertThat(by).as("handlers of %s", event).containsExactly(ownerOf.get(id));
			});
			assertThat(outOfOrder.get()).isZero();
			System.out.printf("tag-slice-groups %d: %d events, each handled once by its segment's owner%n", groups,
					events);
		}
		finally {
			engines.forEach((engine) -> {
				result(engine.stopAll());
				engine.close();
			});
		}
	}

	private static Map<String, String> owners(LeaseTable leases, String name, List<String> keys) {
		Map<String, String> owners = new HashMap<>();
		for (String segment : keys) {
			Optional<Lease> row = result(leases.read(name, segment));
			row.filter((lease) -> lease.owner() != null).ifPresent((lease) -> owners.put(segment, lease.owner()));
		}
		return owners;
	}

}
