package io.cassandrajournal.query;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.projection.CassandraDeadLetterQueue;
import io.cassandrajournal.projection.DeadLetter;
import io.cassandrajournal.projection.ProjectionId;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every bounded read reads to its LIMIT, not to the end of the driver's first page: the statements' page
 * size ({@link CassandraJournalOptions#pageSize()}, 5 here) is smaller than the limits the callers ask for
 * (10 to 100). On a real node, because paging is the server's.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ReadsPageToTheEndIT {

	private static final int DRIVER_PAGE = 5;

	private TestKeyspace keyspace;

	private SettableClock clock;

	private CassandraJournalOptions options;

	private CassandraJournal journal;

	private CassandraReadJournal query;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.clock = new SettableClock(Instant.parse("2026-03-01T10:15:00Z"));
		this.options = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withUseTagIndex(true)
			.withPageSize(DRIVER_PAGE)
			.withClock(this.clock);
		this.journal = CassandraJournal.create(keyspace.session(), this.options, new JacksonEventSerializer());
		this.query = CassandraReadJournal.create(this.journal, keyspace.session(), this.options,
				new JacksonEventSerializer());
	}

	private static List<EventToAppend> tagged(int count, String... tags) {
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			events.add(EventToAppend.of(new Deposited(i), tags));
		}
		return events;
	}

	private static List<String> walk(CassandraReadJournal query, TagFilter filter, int limit) {
		List<String> seen = new ArrayList<>();
		TagOffset after = TagOffset.START;
		EventsPage<AccountEvent> page;
		int pages = 0;
		do {
			page = result(query.currentEventsByTag(filter, after, limit, AccountEvent.class));
			page.events().forEach((e) -> seen.add(e.event().persistenceId() + "#" + e.event().sequenceNr()));
			after = page.resumeAfter();
			assertThat(++pages).as("pages walked").isLessThan(1000);
		}
		while (!page.caughtUp());
		return seen;
	}

	@Test
	void aSingleTagPageBehindTheHeadIsFullAndNotCaughtUp() {
		String tag = "single-" + System.nanoTime();
		result(this.journal.append(tag + "-a", 0, tagged(60, tag)));

		EventsPage<AccountEvent> first = result(
				this.query.currentEventsByTag(TagFilter.tag(tag), TagOffset.START, 50, AccountEvent.class));
		assertThat(first.events()).as("a page of 50 with a driver page of 5").hasSize(50);
		assertThat(first.caughtUp()).as("10 more events wait: not caught up").isFalse();

		LiveTagFeed feed = this.query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START,
				FeedSettings.DEFAULTS.withPageSize(50));
		assertThat(result(feed.poll())).hasSize(50);
		assertThat(feed.caughtUp()).as("the live feed behind the head").isFalse();
	}

	@Test
	void anAnyMergeReadsEveryRowOfBothTags() {
		String run = "any-" + System.nanoTime();
		// All of a's events are older than b's: a merge that took a cut stream as complete would jump to b
		// and skip the rest of a.
		result(this.journal.append(run + "-a", 0, tagged(20, run + "-x")));
		this.clock.advance(Duration.ofMillis(1));
		result(this.journal.append(run + "-b", 0, tagged(20, run + "-y")));
		this.clock.advance(Duration.ofMillis(1));
		result(this.journal.append(run + "-c", 0, tagged(5, run + "-x", run + "-y")));

		List<String> seen = walk(this.query, TagFilter.any(run + "-x", run + "-y"), 12);

		List<String> expected = new ArrayList<>();
		for (String id : List.of("-a", "-b")) {
			for (int i = 1; i <= 20; i++) {
				expected.add(run + id + "#" + i);
			}
		}
		for (int i = 1; i <= 5; i++) {
			expected.add(run + "-c#" + i);
		}
		assertThat(seen).containsExactlyElementsOf(expected);
	}

	@Test
	void aBucketedReadWalksMoreBucketsThanOneDriverPageLists() {
		CassandraJournalOptions bucketed = this.options.withTagBucketing(TagBucketing.MINUTE);
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), bucketed,
				new JacksonEventSerializer());
		CassandraReadJournal query = CassandraReadJournal.create(journal, this.keyspace.session(), bucketed,
				new JacksonEventSerializer());
		String tag = "bucketed-" + System.nanoTime();
		List<String> expected = new ArrayList<>();
		long head = 0;
		for (int minute = 0; minute < 12; minute++) {
			this.clock.advance(Duration.ofMinutes(1));
			head = result(journal.append(tag + "-a", head, tagged(3, tag))).lastSequenceNr();
			for (long seq = head - 2; seq <= head; seq++) {
				expected.add(tag + "-a#" + seq);
			}
		}
		assertThat(walk(query, TagFilter.tag(tag), 100)).as("12 buckets of 3 events, 5 buckets per driver page")
			.containsExactlyElementsOf(expected);
		EventsPage<AccountEvent> page = result(
				query.currentEventsByTag(TagFilter.tag(tag), TagOffset.START, 20, AccountEvent.class));
		assertThat(page.events()).hasSize(20);
		assertThat(page.caughtUp()).isFalse();
	}

	@Test
	void persistenceIdPagesAreFullUpToTheirLimit() {
		String prefix = "ids-" + System.nanoTime() + "-";
		for (int i = 0; i < 30; i++) {
			result(this.journal.append(prefix + String.format("%02d", i), 0, tagged(1)));
		}
		List<String> first = result(this.journal.persistenceIds(null, 25));
		assertThat(first).as("a page of 25 with a driver page of 5").hasSize(25);
		List<String> ours = new ArrayList<>();
		String after = null;
		List<String> page;
		do {
			page = result(this.journal.persistenceIds(after, 25));
			page.stream().filter((id) -> id.startsWith(prefix)).forEach(ours::add);
			after = page.isEmpty() ? after : page.get(page.size() - 1);
		}
		while (page.size() == 25);
		assertThat(ours).hasSize(30).isSorted();
	}

	@Test
	void deadLettersBeyondTheFirstDriverPageAreListed() {
		CassandraDeadLetterQueue queue = CassandraDeadLetterQueue.create(this.keyspace.session(), this.options,
				"projection_dead_letters");
		String projection = "dlq-" + System.nanoTime();
		for (int i = 0; i < 12; i++) {
			PersistentEvent<String> event = new PersistentEvent<>("acc-" + String.format("%02d", i), 1,
					this.clock.instant(), java.util.Set.of(), "{}");
			result(queue.add(new DeadLetter(new ProjectionId(projection, ""), event, "boom", this.clock.instant())));
		}
		assertThat(result(queue.list(projection, 100_000))).as("12 dead letters, 5 per driver page").hasSize(12);
		assertThat(result(queue.list(projection, 7))).hasSize(7);
	}

}
