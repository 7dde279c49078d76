package io.cassandrajournal.query;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.TagSlices;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.JournalWriteUncertainException;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testing.SlicedRows;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.FaultInjectingSession.writesTo;
import static io.cassandrajournal.testing.SlicedRows.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The segment-aware tag index ({@code tag-slice-groups}) on a real node: each tag row is written a second time
 * to its persistenceId's slice group partition; a feed of a slice range reads only the range's groups and gives
 * exactly the events the whole feed gives for the range, in the same order, for 1 to 32 segments of a 16-group
 * index; {@code deleteTo} and the late-row check delete the copies too. Each test uses tags of its own.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlicedTagIndexIT {

	private static final int GROUPS = 16;

	private static final Instant T0 = Instant.parse("2026-03-01T10:15:00Z");

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
			.withUseTagIndex(true)
			.withTagSliceGroups(GROUPS)
			.withInFlightWait(Duration.ofSeconds(1))
			.withClock(this.clock);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		this.journal = CassandraJournal.create(keyspace.session(), this.options, serializer);
		this.query = CassandraReadJournal.create(this.journal, keyspace.session(), this.options, serializer);
	}

	private CqlSession session() {
		return this.keyspace.session();
	}

	/** Appends 3 events to each of 48 entities, some also under a second tag, the clock moving in between. */
	private Map<String, Long> append(String tag, String other) {
		Map<String, Long> heads = new HashMap<>();
		for (int round = 0; round < 3; round++) {
			for (int e = 0; e < 48; e++) {
				String id = tag + "-" + UUID.nameUUIDFromBytes((tag + e).getBytes());
				long head = heads.getOrDefault(id, 0L);
				EventToAppend event = (e % 3 == 0) ? EventToAppend.of(new Deposited(e), tag, other)
						: EventToAppend.of(new Deposited(e), tag);
				result(this.journal.append(id, head, List.of(event)));
				heads.put(id, head + 1);
				if (e % 5 == 0) {
					this.clock.advance(Duration.ofMillis(3));
				}
			}
		}
		this.clock.advance(Duration.ofSeconds(1));
		return heads;
	}

	@Test
	void aSliceRangeFeedGivesTheWholeFeedsEventsOfItsSlicesInTheSameOrder() {
		String tag = "sliced-" + System.nanoTime();
		String other = tag + "-other";
		append(tag, other);
		for (TagFilter filter : List.of(TagFilter.tag(tag), TagFilter.any(tag, other))) {
			List<TaggedEvent<String>> whole = drain(this.query.liveEventsByTag(filter, TagOffset.START, NO_WINDOWS));
			assertThat(whole).hasSize(144);
			for (int segments : new int[] { 1, 2, 4, 16, 32 }) {
				int size = TagSlices.SLICES / segments;
				List<String> union = new ArrayList<>();
				for (int from = 0; from < TagSlices.SLICES; from += size) {
					int first = from;
					int last = from + size - 1;
					List<String> expected = whole.stream()
						.filter((e) -> inRange(e.event().persistenceId(), first, last))
						.map(SlicedRows::key)
						.toList();
					List<TaggedEvent<String>> mine = drain(
							this.query.liveEventsByTag(filter, TagOffset.START, NO_WINDOWS, first, last));
					assertThat(mine.stream().map(SlicedRows::key).toList())
						.as("%s, %d segments, slices %d-%d", filter.canonical(), segments, first, last)
						.containsExactlyElementsOf(expected);
					assertThat(mine.stream().map(TaggedEvent::offset).toList())
						.containsExactlyElementsOf(whole.stream()
							.filter((e) -> inRange(e.event().persistenceId(), first, last))
							.map(TaggedEvent::offset)
							.toList());
					union.addAll(expected);
				}
				assertThat(union).containsExactlyInAnyOrderElementsOf(whole.stream().map(SlicedRows::key).toList());
			}
		}
		// Every row sits in its persistenceId's group partition, and nowhere else.
		Map<Integer, Integer> perGroup = new HashMap<>();
		for (TaggedEvent<String> event : drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START,
				NO_WINDOWS))) {
			perGroup.merge(TagSlices.groupOf(this.options.sliceHash(), event.event().persistenceId(), GROUPS), 1,
					Integer::sum);
		}
		for (int group = 0; group < GROUPS; group++) {
			assertThat(groupRows(tag, group)).as("rows of group %d", group).isEqualTo(perGroup.getOrDefault(group, 0));
		}
	}

	@Test
	void deleteToDeletesTheSlicedCopies() {
		String tag = "deleted-" + System.nanoTime();
		Map<String, Long> heads = append(tag, tag + "-other");
		String victim = heads.keySet().iterator().next();
		int group = TagSlices.groupOf(this.options.sliceHash(), victim, GROUPS);
		int before = groupRows(tag, group);
		result(this.journal.deleteTo(victim, 2));
		assertThat(groupRows(tag, group)).isEqualTo(before - 2);
		int slice = TagSlices.sliceOf(this.options.sliceHash(), victim);
		List<String> keys = drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, NO_WINDOWS, slice,
				slice)).stream().map(SlicedRows::key).toList();
		assertThat(keys).contains(victim + "#3").doesNotContain(victim + "#1", victim + "#2");
	}

	@Test
	void aLateRowWithoutItsEventIsSkippedAndDeletedFromBothIndexes() {
		String tag = "late-" + System.nanoTime();
		append(tag, tag + "-other");
		// The rows of an append whose events never landed (a batch sealed out), stamped 2 s ago: the head's first
		// read of them is at least in-flight-wait (1 s) late, so the feed checks them against the events table.
		String orphan = tag + "-orphan";
		long stamp = this.clock.millis() - 2_000;
		int group = TagSlices.groupOf(this.options.sliceHash(), orphan, GROUPS);
		String ks = this.keyspace.name();
		session().execute(SimpleStatement.newInstance("INSERT INTO " + ks + ".events_by_tag (tag, timestamp, "
				+ "persistence_id, sequence_nr, payload, tags) VALUES (?, ?, ?, 1, '{\"kind\":\"deposited\",\"amount\":1}', ?)",
				tag, stamp, orphan, Set.of(tag)));
		session().execute(SimpleStatement.newInstance("INSERT INTO " + ks + ".events_by_tag_sliced16 (tag, slice_group, "
				+ "timestamp, persistence_id, sequence_nr, payload, tags) VALUES (?, ?, ?, ?, 1, "
				+ "'{\"kind\":\"deposited\",\"amount\":1}', ?)", tag, group, stamp, orphan, Set.of(tag)));
		int slice = TagSlices.sliceOf(this.options.sliceHash(), orphan);
		// A feed started just before the rows (so they are not history it catches up on), over the orphan's slice.
		LiveTagFeed feed = this.query.liveEventsByTag(TagFilter.tag(tag),
				new TagOffset(stamp - 1, "", 0), new FeedSettings(Duration.ZERO, Duration.ofSeconds(5), 7), slice, slice);
		List<String> delivered = drain(feed).stream().map(SlicedRows::key).toList();
		assertThat(delivered).doesNotContain(orphan + "#1");
		assertThat(feed.lateRowsSkipped()).isEqualTo(1);
		assertThat(session().execute(SimpleStatement.newInstance("SELECT count(*) FROM " + ks
				+ ".events_by_tag_sliced16 WHERE tag = ? AND slice_group = ? AND timestamp = ? AND persistence_id = ?",
				tag, group, stamp, orphan)).one().getLong(0)).isZero();
		assertThat(session().execute(SimpleStatement.newInstance("SELECT count(*) FROM " + ks
				+ ".events_by_tag WHERE tag = ? AND timestamp = ? AND persistence_id = ?", tag, stamp, orphan)).one()
			.getLong(0)).isZero();
	}

	@Test
	void theBackfillFillsTheSlicedIndexOfAJournalWrittenWithoutIt() {
		// A journal of its own tables, written with the reference index only, then switched on and backfilled.
		CassandraJournalOptions before = CassandraJournalOptions.create()
			.withKeyspace(this.keyspace.name())
			.withEventsTable("events_bf")
			.withMetadataTable("metadata_bf")
			.withAllIdsTable("ids_bf")
			.withTagIndexTable("tags_bf")
			.withUseTagIndex(true)
			.withClock(this.clock);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal unsliced = CassandraJournal.create(session(), before, serializer);
		String tag = "backfilled-" + System.nanoTime();
		for (int e = 0; e < 40; e++) {
			result(unsliced.append(tag + "-" + UUID.nameUUIDFromBytes((tag + e).getBytes()), 0,
					List.of(EventToAppend.of(new Deposited(e), tag), EventToAppend.of(new Deposited(e), tag))));
			this.clock.advance(Duration.ofMillis(2));
		}
		this.clock.advance(Duration.ofSeconds(1));
		CassandraJournalOptions after = before.withTagSliceGroups(GROUPS);
		assertThat(result(TagIndexBackfill.create(unsliced, session(), after).run())).isEqualTo(80);
		CassandraReadJournal sliced = CassandraReadJournal.create(unsliced, session(), after, serializer);
		List<TaggedEvent<String>> whole = drain(sliced.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, NO_WINDOWS));
		assertThat(whole).hasSize(80);
		List<String> union = new ArrayList<>();
		for (int from = 0; from < TagSlices.SLICES; from += 64) {
			int first = from;
			List<String> mine = drain(sliced.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, NO_WINDOWS, first,
					first + 63)).stream().map(SlicedRows::key).toList();
			assertThat(mine).containsExactlyElementsOf(whole.stream()
				.filter((e) -> inRange(e.event().persistenceId(), first, first + 63))
				.map(SlicedRows::key)
				.toList());
			union.addAll(mine);
		}
		assertThat(union).hasSize(80);
	}

	@Test
	void theSlicedCopyTakesTheTagIndexTtl() {
		CassandraJournalOptions expiring = this.options.withTagIndexTtl(Duration.ofHours(1));
		CassandraJournal journal = CassandraJournal.create(session(), expiring, new JacksonEventSerializer());
		String tag = "ttl-" + System.nanoTime();
		String id = tag + "-entity";
		result(journal.append(id, 0, List.of(EventToAppend.of(new Deposited(1), tag))));
		int ttl = session().execute(SimpleStatement.newInstance("SELECT TTL(payload) FROM " + this.keyspace.name()
				+ ".events_by_tag_sliced16 WHERE tag = ? AND slice_group = ?", tag,
				TagSlices.groupOf(this.options.sliceHash(), id, GROUPS)))
			.one()
			.getInt(0);
		assertThat(ttl).isBetween(3000, 3600);
	}

	/** A payload of a chosen size. */
	public record Memo(String text) {
	}

	/** @return 20 events of 3 KB under one tag: 180 KB with both copies of their tag rows, over one logged batch */
	private static List<EventToAppend> tooLargeForOneBatch(String tag) {
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			events.add(EventToAppend.of(new Memo(i + "m".repeat(3_000)), tag));
		}
		return events;
	}

	/**
	 * Review S2 of the segment-aware index: an append too large for one logged batch writes its events, then its tag
	 * rows; the reference copy and the sliced copy of a tag's rows were two writes in parallel, so when one failed
	 * for good and the other landed, the append ended uncertain with its events stored, whole-tag readers and
	 * segment feeds disagreeing on it for good. Here every write of one copy fails before it is sent: the append
	 * may end uncertain (the README allows its events to lack tag rows then), but a segment feed delivers exactly
	 * what the whole-tag feed delivers of its slices.
	 */
	@ParameterizedTest(name = "the {0} copy fails")
	@ValueSource(strings = { "sliced", "whole" })
	void anAppendWrittenEventsFirstNeverLeavesOneCopyOfItsTagRowsWithoutTheOther(String failing) {
		String tag = "split-" + failing + "-" + System.nanoTime();
		String id = tag + "-entity";
		FaultInjectingSession faults = new FaultInjectingSession(session());
		// A longer in-flight wait for the writer: its tag rows are written well before its deadline.
		CassandraJournal journal = CassandraJournal.create(faults.session(),
				this.options.withInFlightWait(Duration.ofSeconds(10)), new JacksonEventSerializer());
		String table = failing.equals("sliced") ? this.options.tagIndexSlicedTable() : this.options.tagIndexTable();
		faults.failBeforeSending(writesTo(table), Integer.MAX_VALUE);

		Throwable failed = catchThrowable(() -> result(journal.append(id, 0, tooLargeForOneBatch(tag))));
		faults.heal();
		this.clock.advance(Duration.ofSeconds(1));

		assertThat(faults.injected()).as("writes of the %s copy failed", failing).isPositive();
		assertThat(failed).isInstanceOf(JournalWriteUncertainException.class);
		assertThat(session().execute(SimpleStatement.newInstance("SELECT count(*) FROM " + this.keyspace.name()
				+ ".events WHERE persistence_id = ? AND partition_nr = 0", id)).one().getLong(0))
			.as("the events were written").isEqualTo(20);
		int slice = TagSlices.sliceOf(this.options.sliceHash(), id);
		List<String> whole = drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, NO_WINDOWS)).stream()
			.map(SlicedRows::key)
			.toList();
		List<String> segment = drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, NO_WINDOWS, slice,
				slice)).stream().map(SlicedRows::key).toList();
		assertThat(segment).as("the segment feed of the entity's slice against the whole-tag feed")
			.containsExactlyElementsOf(whole);
		assertThat(groupRows(tag, TagSlices.groupOf(this.options.sliceHash(), id, GROUPS))).isEqualTo(whole.size());
	}

	@Test
	void appendsTooLargeForOneBatchWriteBothCopies() {
		String tag = "large-" + System.nanoTime();
		String many = tag + "-many";
		String huge = tag + "-huge";
		result(this.journal.append(many, 0, tooLargeForOneBatch(tag)));
		// One event of 60 KB: its two copies alone are over batch_size_fail_threshold (50 KiB) in one batch.
		result(this.journal.append(huge, 0, List.of(EventToAppend.of(new Memo("h".repeat(60_000)), tag, tag + "-2"))));
		this.clock.advance(Duration.ofSeconds(1));

		List<TaggedEvent<String>> whole = drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START,
				NO_WINDOWS));
		assertThat(whole).hasSize(21);
		for (String id : List.of(many, huge)) {
			int slice = TagSlices.sliceOf(this.options.sliceHash(), id);
			assertThat(drain(this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, NO_WINDOWS, slice, slice))
				.stream()
				.map(SlicedRows::key)
				.filter((key) -> key.startsWith(id + "#"))
				.toList()).as(id).hasSize(id.equals(many) ? 20 : 1);
		}
		int slice = TagSlices.sliceOf(this.options.sliceHash(), huge);
		assertThat(drain(this.query.liveEventsByTag(TagFilter.tag(tag + "-2"), TagOffset.START, NO_WINDOWS, slice,
				slice))).hasSize(1);
	}

	private int groupRows(String tag, int group) {
		return SlicedRows.of(session(), this.keyspace.name(), "events_by_tag_sliced16").groupRows(tag, group);
	}

	private boolean inRange(String persistenceId, int from, int to) {
		return SlicedRows.inRange(this.options.sliceHash(), persistenceId, from, to);
	}

}
