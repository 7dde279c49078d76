package io.cassandrajournal.query;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalLayoutMismatchException;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.TagSlices;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.retention.JournalCleanup;
import io.cassandrajournal.retention.TagBucket;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testing.SlicedRows;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.SlicedRows.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The segment-aware tag index combined with tag bucketing ({@code tag-slice-groups} 16 and {@code tag-bucketing}
 * minute) on a real node: each tag row's sliced copy lives in the partition (tag, bucket, slice group) of
 * {@code <tag-index-table>_minute_sliced16}; a feed of a slice range walks the tag's bucket list and reads only its
 * groups' partitions per bucket, giving exactly the whole feed's events of its slices in the same order across
 * bucket boundaries; {@code deleteTo} and the retention's bucket drop delete the sliced copies too; the layout
 * record refuses an instance whose bucketing or groups differ. The clock moves one minute per round of appends,
 * so every round lands in a bucket of its own.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BucketedSlicedTagIndexIT {

	private static final int GROUPS = 16;

	private static final int ROUNDS = 4;

	private static final Instant T0 = Instant.parse("2026-03-01T10:15:00Z");

	/** The table this layout's sliced copies go to: the bucketed table's name with the sliced suffix. */
	private static final String SLICED = "bs_tags_minute_sliced16";

	/** No windows: a poll reads up to the clock, and a drained feed has delivered everything. */
	private static final FeedSettings NO_WINDOWS = new FeedSettings(Duration.ZERO, Duration.ZERO, 7);

	private TestKeyspace keyspace;

	private final SettableClock clock = new SettableClock(T0);

	private CassandraJournalOptions options;

	private CassandraJournal journal;

	private CassandraReadJournal query;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withEventsTable("bs_events")
			.withMetadataTable("bs_metadata")
			.withAllIdsTable("bs_ids")
			.withTagIndexTable("bs_tags")
			.withUseTagIndex(true)
			.withTagBucketing(TagBucketing.MINUTE)
			.withTagSliceGroups(GROUPS)
			.withInFlightWait(Duration.ofSeconds(1))
			.withClock(this.clock);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal.verifyLayout(keyspace.session(), this.options);
		this.journal = CassandraJournal.create(keyspace.session(), this.options, serializer);
		this.query = CassandraReadJournal.create(this.journal, keyspace.session(), this.options, serializer);
	}

	private CqlSession session() {
		return this.keyspace.session();
	}

	/**
	 * Appends one event to each of 40 entities per round, some also under a second tag, {@link #ROUNDS} rounds, the
	 * clock one minute further (a new bucket) each round.
	 * @return the entities' heads
	 */
	private Map<String, Long> append(String tag, String other) {
		Map<String, Long> heads = new HashMap<>();
		for (int round = 0; round < ROUNDS; round++) {
			for (int e = 0; e < 40; e++) {
				String id = tag + "-" + UUID.nameUUIDFromBytes((tag + e).getBytes());
				long head = heads.getOrDefault(id, 0L);
				EventToAppend event = (e % 3 == 0) ? EventToAppend.of(new Deposited(e), tag, other)
						: EventToAppend.of(new Deposited(e), tag);
				result(this.journal.append(id, head, List.of(event)));
				heads.put(id, head + 1);
				if (e % 7 == 0) {
					this.clock.advance(Duration.ofMillis(3));
				}
			}
			this.clock.advance(Duration.ofMinutes(1));
		}
		return heads;
	}

	@Test
	void aSliceRangeFeedGivesTheWholeFeedsEventsOfItsSlicesAcrossBuckets() {
		String tag = "bsliced-" + System.nanoTime();
		String other = tag + "-other";
		append(tag, other);
		for (TagFilter filter : List.of(TagFilter.tag(tag), TagFilter.any(tag, other))) {
			List<TaggedEvent<String>> whole = drain(this.query.liveEventsByTag(filter, TagOffset.START, NO_WINDOWS));
			assertThat(whole).hasSize(40 * ROUNDS);
			for (int segments : new int[] { 2, 4, 16, 32 }) {
				int size = TagSlices.SLICES / segments;
				List<String> union = new ArrayList<>();
				for (int from = 0; from < TagSlices.SLICES; from += size) {
					int first = from;
					int last = from + size - 1;
					List<TaggedEvent<String>> expected = whole.stream()
						.filter((e) -> inRange(e.event().persistenceId(), first, last))
						.toList();
					List<TaggedEvent<String>> mine = drain(
							this.query.liveEventsByTag(filter, TagOffset.START, NO_WINDOWS, first, last));
					assertThat(mine.stream().map(SlicedRows::key).toList())
						.as("%s, %d segments, slices %d-%d", filter.canonical(), segments, first, last)
						.containsExactlyElementsOf(expected.stream().map(SlicedRows::key).toList());
					assertThat(mine.stream().map(TaggedEvent::offset).toList())
						.containsExactlyElementsOf(expected.stream().map(TaggedEvent::offset).toList());
					union.addAll(mine.stream().map(SlicedRows::key).toList());
				}
				assertThat(union)
					.containsExactlyInAnyOrderElementsOf(whole.stream().map(SlicedRows::key).toList());
			}
		}
		// Every row sits in the partition of its bucket and its persistenceId's group, and nowhere else.
		Map<List<Long>, Integer> perPartition = new HashMap<>();
		for (TaggedEvent<String> event : drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START,
				NO_WINDOWS))) {
			perPartition.merge(List.of(TagBucketing.MINUTE.bucketOf(event.offset().timestamp()),
					(long) TagSlices.groupOf(this.options.sliceHash(), event.event().persistenceId(), GROUPS)), 1,
					Integer::sum);
		}
		assertThat(perPartition.keySet().stream().map((p) -> p.get(0)).distinct()).as("buckets").hasSize(ROUNDS);
		for (long bucket : perPartition.keySet().stream().map((p) -> p.get(0)).distinct().toList()) {
			for (int group = 0; group < GROUPS; group++) {
				assertThat(partitionRows(tag, bucket, group)).as("rows of bucket %d, group %d", bucket, group)
					.isEqualTo(perPartition.getOrDefault(List.of(bucket, (long) group), 0));
			}
		}
	}

	@Test
	void deleteToDeletesTheSlicedCopiesInTheirBuckets() {
		String tag = "bdeleted-" + System.nanoTime();
		Map<String, Long> heads = append(tag, tag + "-other");
		String victim = heads.keySet().iterator().next();
		int group = TagSlices.groupOf(this.options.sliceHash(), victim, GROUPS);
		int before = groupRows(tag, group);
		result(this.journal.deleteTo(victim, 2));
		assertThat(groupRows(tag, group)).isEqualTo(before - 2);
		int slice = TagSlices.sliceOf(this.options.sliceHash(), victim);
		List<String> keys = drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, NO_WINDOWS, slice,
				slice)).stream().map(SlicedRows::key).toList();
		assertThat(keys).contains(victim + "#3", victim + "#4").doesNotContain(victim + "#1", victim + "#2");
	}

	@Test
	void droppingTagBucketsDropsTheirSlicedCopies() {
		String tag = "bdropped-" + System.nanoTime();
		Instant start = this.clock.instant();
		append(tag, tag + "-other");
		long firstBucket = TagBucketing.MINUTE.bucketOf(start.toEpochMilli());
		int[] before = new int[GROUPS];
		int total = 0;
		for (int group = 0; group < GROUPS; group++) {
			before[group] = partitionRows(tag, firstBucket + 60_000, group);
			total += before[group];
		}
		assertThat(total).as("rows of the second bucket").isEqualTo(40);
		JournalCleanup cleanup = JournalCleanup.create(session(), this.journal);
		// The first two buckets end before start + 2 minutes.
		List<TagBucket> planned = result(cleanup.planTagBuckets(start.plus(Duration.ofMinutes(2)))).stream()
			.filter((bucket) -> bucket.tag().equals(tag))
			.toList();
		assertThat(planned).hasSize(2);
		result(cleanup.dropTagBuckets(planned));
		for (int group = 0; group < GROUPS; group++) {
			assertThat(partitionRows(tag, firstBucket, group)).as("first bucket, group %d", group).isZero();
			assertThat(partitionRows(tag, firstBucket + 60_000, group)).as("second bucket, group %d", group).isZero();
		}
		int kept = 0;
		for (int group = 0; group < GROUPS; group++) {
			kept += partitionRows(tag, firstBucket + 120_000, group) + partitionRows(tag, firstBucket + 180_000, group);
		}
		assertThat(kept).as("rows of the buckets kept").isEqualTo(80);
		// A segment feed from the start now gives the kept buckets' events of its slices only.
		List<TaggedEvent<String>> whole = drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START,
				NO_WINDOWS));
		assertThat(whole).hasSize(80);
		List<String> union = new ArrayList<>();
		for (int from = 0; from < TagSlices.SLICES; from += 256) {
			union.addAll(drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, NO_WINDOWS, from,
					from + 255)).stream().map(SlicedRows::key).toList());
		}
		assertThat(union).containsExactlyInAnyOrderElementsOf(whole.stream().map(SlicedRows::key).toList());
	}

	@Test
	void theLayoutRecordRefusesAnInstanceWithOtherBucketingOrGroups() {
		CassandraJournal.verifyLayout(session(), this.options);
		assertThat(session().execute("SELECT settings FROM " + this.keyspace.name() + ".bs_events_layout WHERE id = 'layout'")
			.one()
			.getMap("settings", String.class, String.class)).containsEntry("tag-bucketing", "MINUTE")
			.containsEntry("tag-slice-groups", "16");
		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(session(), this.options.withTagSliceGroups(32)))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("tag-slice-groups", "16", "32")));
		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(session(), this.options.withTagSliceGroups(0)))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("tag-slice-groups", "16", "0")));
		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(session(), this.options.withTagBucketing(TagBucketing.HOUR)))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("tag-bucketing", "MINUTE", "HOUR")));
	}

	private SlicedRows rows() {
		return SlicedRows.bucketed(session(), this.keyspace.name(), SLICED, "bs_tags_minute_buckets");
	}

	private int groupRows(String tag, int group) {
		return rows().groupRows(tag, group);
	}

	private int partitionRows(String tag, long bucket, int group) {
		return rows().partitionRows(tag, bucket, group);
	}

	private boolean inRange(String persistenceId, int from, int to) {
		return SlicedRows.inRange(this.options.sliceHash(), persistenceId, from, to);
	}

}
