package io.cassandrajournal.projection;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.TagSlices;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A projection of 16 segments shared by 3 instances over a tag index with both {@code tag-bucketing} (minute) and
 * the segment-aware index ({@code tag-slice-groups} 16): once the segments are settled on their owners, every event
 * appended over 5 buckets (the clock moves a minute per round) is handled exactly once, by the instance owning its
 * segment, in order per entity; and no read of the sliced table an instance's read journal sends returns a row of
 * another instance's groups' (tag, bucket, group) partitions, while its own groups' partitions are read in every
 * bucket.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BucketedSlicedSharedProjectionIT {

	private static final int SEGMENTS = 16;

	private static final int GROUPS = 16;

	private static final int ROUNDS = 5;

	private static final List<String> INSTANCES = List.of("a", "b", "c");

	private TestKeyspace keyspace;

	@BeforeAll
	void keyspace(TestKeyspace keyspace) {
		this.keyspace = keyspace;
	}

	/** One read of the sliced table: who sent it, and the partition it read. */
	private record SlicedRead(String instance, long bucket, int group) {
	}

	@Test
	void everyEventIsHandledOnceByItsSegmentsOwnerWhichReadsOnlyItsGroupsPartitions() {
		SettableClock clock = new SettableClock(Instant.parse("2026-05-01T09:00:00Z"));
		CassandraJournalOptions options = CassandraJournalOptions.create()
			.withKeyspace(this.keyspace.name())
			.withEventsTable("events_bs")
			.withMetadataTable("metadata_bs")
			.withTagIndexTable("tags_bs")
			.withUseTagIndex(true)
			.withTagBucketing(TagBucketing.MINUTE)
			.withTagSliceGroups(GROUPS)
			.withClock(clock);
		String slicedTable = "tags_bs_minute_sliced" + GROUPS;
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal.verifyLayout(this.keyspace.session(), options);
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), options, serializer);
		CassandraDurableStateStore state = CassandraDurableStateStore.create(this.keyspace.session(), options,
				serializer);
		LeaseTable leases = LeaseTable.create(this.keyspace.session(), options);
		String tag = "bsliced-shared-" + System.nanoTime();
		String name = "bucketed-sliced-balances";
		Map<String, List<String>> handledBy = new ConcurrentHashMap<>();
		Map<String, Long> lastSeen = new ConcurrentHashMap<>();
		AtomicInteger outOfOrder = new AtomicInteger();
		List<SlicedRead> reads = new CopyOnWriteArrayList<>();
		List<ProjectionEngine> engines = new ArrayList<>();
		for (String instance : INSTANCES) {
			// Each instance's read journal sends its reads through a session that records the sliced ones.
			CqlSession recording = recording(this.keyspace.session(), slicedTable, instance, reads);
			CassandraReadJournal query = CassandraReadJournal.create(journal, recording, options, serializer);
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
					// The head stops 1 s behind the (settable) clock: a round's rows, all stamped before the clock
					// moves on, are read once the clock has passed them by more than that.
					ProjectionSettings.defaults().withSegments(SEGMENTS).withPollInterval(Duration.ofMillis(100))
						.withFeed(new FeedSettings(Duration.ofSeconds(1), Duration.ZERO, 50))));
			engines.add(engine);
		}
		try {
			engines.forEach(ProjectionEngine::startAll);
			List<SliceRange> ranges = SliceRange.split(SEGMENTS);
			List<String> keys = ranges.stream().map(SliceRange::key).toList();
			Map<String, String> expected = Rendezvous.assign(name, keys, INSTANCES);
			// Bound: members count as live after their second beat, then each takes or hands over on its next
			// renewal (500 ms): well within 20 s.
			await("each segment owned by its rendezvous winner").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> owners(leases, name, keys).equals(expected));
			Map<String, Set<Integer>> groupsOf = new HashMap<>();
			for (SliceRange range : ranges) {
				Set<Integer> groups = groupsOf.computeIfAbsent(expected.get(range.key()), (k) -> new HashSet<>());
				for (int g = TagSlices.firstGroup(range.from(), range.to(), GROUPS); g <= TagSlices.lastGroup(range.from(),
						range.to(), GROUPS); g++) {
					groups.add(g);
				}
			}
			reads.clear();
			List<String> ids = new ArrayList<>();
			for (int e = 0; e < 64; e++) {
				ids.add(tag + "-" + UUID.nameUUIDFromBytes((tag + e).getBytes()));
			}
			CassandraReadJournal plain = CassandraReadJournal.create(journal, this.keyspace.session(), options, serializer);
			Map<String, String> ownerOf = new HashMap<>();
			for (String id : ids) {
				SliceRange range = ranges.stream().filter((r) -> r.contains(plain.sliceOf(id))).findFirst().orElseThrow();
				ownerOf.put(id, expected.get(range.key()));
			}
			assertThat(ownerOf.values()).as("the entities reach every instance").containsAll(INSTANCES);
			Set<Long> buckets = new HashSet<>();
			for (int round = 0; round < ROUNDS; round++) {
				for (String id : ids) {
					result(journal.append(id, round, List.of(EventToAppend.of(new Deposited(round + 1), tag))));
				}
				buckets.add(TagBucketing.MINUTE.bucketOf(clock.millis()));
				clock.advance(Duration.ofMinutes(1));
			}
			assertThat(buckets).as("the rounds' buckets").hasSize(ROUNDS);
			int events = ids.size() * ROUNDS;
			// Bound: each segment polls every 100 ms; 320 events in batches of 50 are handled within a few seconds.
			await("every event handled").atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(100))
				.until(() -> handledBy.size() == events);
			assertThat(owners(leases, name, keys)).as("no owner changed while handling").isEqualTo(expected);
			handledBy.forEach((event, by) -> {
				String id = event.substring(0, event.lastIndexOf('#'));
				assertThat(by).as("handlers of %s", event).containsExactly(ownerOf.get(id));
			});
			assertThat(outOfOrder.get()).isZero();
			assertThat(reads).as("reads of the sliced table that returned rows").isNotEmpty();
			for (SlicedRead read : reads) {
				assertThat(groupsOf.get(read.instance())).as("groups of instance %s, read of bucket %d", read.instance(),
						read.bucket()).contains(read.group());
			}
			assertThat(reads.stream().map(SlicedRead::bucket).distinct()).as("buckets read")
				.containsAll(buckets);
			System.out.printf("tag-bucketing minute + tag-slice-groups %d: %d events over %d buckets, each handled once "
					+ "by its segment's owner; %d reads of the sliced table, none of another instance's groups%n", GROUPS,
					events, ROUNDS, reads.size());
		}
		finally {
			engines.forEach((engine) -> {
				result(engine.stopAll());
				engine.close();
			});
		}
	}

	/**
	 * A session that records every read of the sliced table it sends that returns rows (its first page): its
	 * bucket and slice group.
	 */
	private static CqlSession recording(CqlSession delegate, String table, String instance, List<SlicedRead> reads) {
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				(proxy, method, args) -> {
					Object result;
					try {
						result = method.invoke(delegate, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
					if (method.getName().equals("executeAsync") && args != null && args.length > 0
							&& args[0] instanceof BoundStatement bound && result instanceof CompletionStage<?> stage) {
						String query = bound.getPreparedStatement().getQuery();
						if (query.startsWith("SELECT") && query.contains("." + table + " ")) {
							SlicedRead read = new SlicedRead(instance, bound.getLong("bucket"), bound.getInt("slice_group"));
							// Counted when it returned rows: a read of another group's partition that found one. The
							// caller gets the stage that counts, so the page is counted before the caller's own
							// callbacks consume its rows (a callback attached beside them ran after them).
							return stage.thenApply((rs) -> {
								if (rs instanceof AsyncResultSet page && page.remaining() > 0) {
									reads.add(read);
								}
								return rs;
							});
						}
					}
					return result;
				});
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
