package io.cassandrajournal.query;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.AccountEvent.Opened;
import io.cassandrajournal.testing.CountingSession;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The other query plans on a real node: the time-bucketed tag index and the journal scan (index off, or a
 * filter without a tag every match carries). Each test uses tags of its own in a keyspace of this class.
 */
@CassandraTest
class TagPlansIT {

	private static final Instant T0 = Instant.parse("2026-03-01T10:15:00Z");

	private static String key(TaggedEvent<?> event) {
		return event.event().persistenceId() + "#" + event.event().sequenceNr();
	}

	private static List<String> walk(CassandraReadJournal query, TagFilter filter, TagOffset from, int pageSize) {
		List<String> seen = new ArrayList<>();
		TagOffset after = from;
		EventsPage<AccountEvent> page;
		do {
			page = result(query.currentEventsByTag(filter, after, pageSize, AccountEvent.class));
			page.events().forEach((e) -> seen.add(key(e)));
			after = page.resumeAfter();
		}
		while (!page.caughtUp());
		return seen;
	}

	@Test
	void bucketedIndexWalksNonEmptyBucketsInOrderFromAnOldOffset(TestKeyspace keyspace) {
		SettableClock clock = new SettableClock(T0);
		CountingSession counting = new CountingSession(keyspace.session());
		CassandraJournalOptions options = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withUseTagIndex(true)
			.withTagBucketing(TagBucketing.HOUR)
			.withClock(clock);
		CassandraJournal journal = CassandraJournal.create(counting.session(), options, new JacksonEventSerializer());
		CassandraReadJournal query = CassandraReadJournal.create(journal, counting.session(), options,
				new JacksonEventSerializer());
		String tag = "bucketed";
		// Four non-empty hours with empty hours (and a day boundary) between them.
		Duration[] at = { Duration.ZERO, Duration.ofHours(1), Duration.ofHours(5), Duration.ofHours(26) };
		List<String> expected = new ArrayList<>();
		for (int b = 0; b < at.length; b++) {
			clock.set(T0.plus(at[b]));
			for (int p = 0; p < 3; p++) {
				String id = "acc-" + p;
				long head = b * 2L;
				result(journal.append(id, head, List.of(EventToAppend.of(new Deposited(b), tag),
						EventToAppend.of(new Deposited(b), tag, "other"))));
				expected.add(id + "#" + (head + 1));
				expected.add(id + "#" + (head + 2));
			}
		}
		// Offset order within a bucket: timestamp, then persistenceId, then sequenceNr; our appends were in
		// that order already.
		List<Long> buckets = new ArrayList<>();
		keyspace.session()
			.execute("SELECT bucket FROM " + options.tagBucketsTable() + " WHERE tag = ?", tag)
			.forEach((row) -> buckets.add(row.getLong("bucket")));
		assertThat(buckets).hasSize(4).isSorted();
		assertThat(options.tagBucketsTable()).isEqualTo("events_by_tag_hour_buckets");

		clock.set(T0.plus(Duration.ofDays(2)));
		counting.takeCount();
		assertThat(walk(query, TagFilter.tag(tag), TagOffset.START, 1000)).containsExactlyElementsOf(expected);
		assertThat(counting.takeCount()).as("a walk from the start lists buckets once and reads four, not every hour "
				+ "since 1970").isLessThanOrEqualTo(6);

		assertThat(walk(query, TagFilter.tag(tag), TagOffset.START, 4)).as("pages that end inside and across buckets")
			.containsExactlyElementsOf(expected);
		TagOffset old = new TagOffset(T0.toEpochMilli(), "acc-1", 2);
		assertThat(walk(query, TagFilter.tag(tag), old, 5)).as("from an old offset, the rest in order")
			.containsExactlyElementsOf(expected.subList(expected.indexOf("acc-1#2") + 1, expected.size()));
		assertThat(walk(query, TagFilter.any(tag, "other"), TagOffset.START, 3)).as("any-plan across buckets")
			.containsExactlyElementsOf(expected);
		assertThat(walk(query, TagFilter.all(tag, "other"), TagOffset.START, 3))
			.containsExactlyElementsOf(expected.stream().filter((k) -> Long.parseLong(k.substring(k.indexOf('#') + 1)) % 2 == 0).toList());

		// The live feed crosses into a bucket that appears after it started.
		LiveTagFeed feed = query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ZERO));
		List<String> live = new ArrayList<>();
		do {
			result(feed.poll()).forEach((e) -> live.add(key(e)));
		}
		while (!feed.caughtUp());
		assertThat(live).containsExactlyElementsOf(expected);
		clock.set(T0.plus(Duration.ofDays(3)));
		result(journal.append("acc-0", 8, List.of(EventToAppend.of(new Deposited(9), tag))));
		clock.advance(Duration.ofSeconds(1));
		assertThat(result(feed.poll())).extracting(TagPlansIT::key).containsExactly("acc-0#9");
	}

	@Test
	void backfillFillsTheBucketedIndexWithoutDuplicates(TestKeyspace keyspace) {
		SettableClock clock = new SettableClock(T0);
		CassandraJournalOptions unindexed = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withClock(clock);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), unindexed, new JacksonEventSerializer());
		String tag = "backfilled";
		for (int i = 0; i < 6; i++) {
			clock.set(T0.plus(Duration.ofMinutes(50L * i)));
			result(journal.append("b-" + i, 0, List.of(EventToAppend.of(new Opened(), tag),
					EventToAppend.of(new Deposited(i), tag))));
		}
		CassandraJournalOptions bucketed = unindexed.withUseTagIndex(true).withTagBucketing(TagBucketing.HOUR);
		CassandraJournal indexed = CassandraJournal.create(keyspace.session(), bucketed, new JacksonEventSerializer());
		CassandraReadJournal query = CassandraReadJournal.create(indexed, keyspace.session(), bucketed,
				new JacksonEventSerializer());
		clock.set(T0.plus(Duration.ofDays(1)));
		assertThat(walk(query, TagFilter.tag(tag), TagOffset.START, 100)).isEmpty();

		TagIndexBackfill backfill = TagIndexBackfill.create(indexed, keyspace.session(), bucketed);
		assertThat(result(backfill.run())).as("rows of every tagged event in the keyspace").isGreaterThanOrEqualTo(12);
		List<String> all = walk(query, TagFilter.tag(tag), TagOffset.START, 5);
		assertThat(all).hasSize(12).doesNotHaveDuplicates();
		assertThat(keyspace.session()
			.execute("SELECT bucket FROM " + bucketed.tagBucketsTable() + " WHERE tag = ?", tag)
			.all()).as("50-minute steps over five hours").hasSize(5);
		result(backfill.run());
		assertThat(walk(query, TagFilter.tag(tag), TagOffset.START, 5)).containsExactlyElementsOf(all);
	}

	@Test
	void withoutTheIndexEveryFilterIsAnsweredByScanningTheJournal(TestKeyspace keyspace) {
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name());
		CassandraReadJournal query = appendFilterFixture(keyspace, options, "noindex");
		assertThat(query.scansJournal(TagFilter.tag("debit"))).isTrue();
		assertFilters(query, "noindex");
	}

	@Test
	void withTheIndexOnFiltersWithoutAPositiveTagScanTheJournal(TestKeyspace keyspace) {
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name())
			.withUseTagIndex(true);
		CassandraReadJournal query = appendFilterFixture(keyspace, options, "indexed");
		assertThat(query.scansJournal(TagFilter.tag("debit"))).isFalse();
		assertThat(query.scansJournal(TagFilter.any("debit", "credit").andNot("test"))).isFalse();
		assertThat(query.scansJournal(TagFilter.of(List.of(), List.of(), List.of("test")))).isTrue();
		assertThat(query.scansJournal(TagFilter.of(List.of(), List.of(), List.of()))).isTrue();
		assertFilters(query, "indexed");
	}

	private static CassandraReadJournal appendFilterFixture(TestKeyspace keyspace, CassandraJournalOptions options,
			String prefix) {
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		result(journal.append(prefix + "-a", 0, List.of(EventToAppend.of(new Opened(), "debit"),
				EventToAppend.of(new Deposited(1), "debit", "credit"), EventToAppend.of(new Deposited(2), "credit"),
				EventToAppend.of(new Deposited(3), "debit", "test"), EventToAppend.of(new Deposited(4), "other"))));
		result(journal.append(prefix + "-b", 0,
				List.of(EventToAppend.of(new Opened()), EventToAppend.of(new Deposited(5), "debit"))));
		return CassandraReadJournal.create(journal, keyspace.session(), options, new JacksonEventSerializer());
	}

	/** Walks with small pages; the keyspace is shared by this class's tests, so only this fixture's ids count. */
	private static void assertFilters(CassandraReadJournal query, String prefix) {
		assertThat(mine(query, TagFilter.tag("debit"), prefix)).containsExactly("a#1", "a#2", "a#4", "b#2");
		assertThat(mine(query, TagFilter.any("debit", "credit"), prefix)).containsExactly("a#1", "a#2", "a#3", "a#4",
				"b#2");
		assertThat(mine(query, TagFilter.all("debit", "credit"), prefix)).containsExactly("a#2");
		assertThat(mine(query, TagFilter.any("debit", "credit").andNot("test"), prefix)).containsExactly("a#1", "a#2",
				"a#3", "b#2");
		assertThat(mine(query, TagFilter.of(List.of(), List.of(), List.of("debit")), prefix))
			.as("not-only: every event without the tag, untagged ones too")
			.containsExactly("a#3", "a#5", "b#1");
		assertThat(mine(query, TagFilter.of(List.of(), List.of(), List.of()), prefix)).as("empty: every event")
			.containsExactly("a#1", "a#2", "a#3", "a#4", "a#5", "b#1", "b#2");
	}

	private static List<String> mine(CassandraReadJournal query, TagFilter filter, String prefix) {
		return walk(query, filter, TagOffset.START, 2).stream()
			.filter((k) -> k.startsWith(prefix + "-"))
			.map((k) -> k.substring(prefix.length() + 1))
			.toList();
	}

}
