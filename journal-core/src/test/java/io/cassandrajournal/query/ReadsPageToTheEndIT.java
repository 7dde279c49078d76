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

	/**
	 * A walk to the end streams each walked partition with the driver's paging state and prefetches the next
	 * page: it must visit exactly what the page-by-page reads show, from the start and from a middle offset,
	 * across more buckets than one bucket listing holds (64), with rows refined away by the filter.
	 */
	@Test
	void aStreamedWalkVisitsExactlyWhatThePagedReadsShowInBothLayouts() {
		for (TagBucketing bucketing : List.of(TagBucketing.NONE, TagBucketing.MINUTE)) {
			// Own events tables: the keyspace's layout record holds one layout per events table.
			CassandraJournalOptions layout = this.options.withTagBucketing(bucketing)
				.withEventsTable("streamed_" + bucketing.name().toLowerCase(java.util.Locale.ROOT));
			CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), layout,
					new JacksonEventSerializer());
			CassandraReadJournal query = CassandraReadJournal.create(journal, this.keyspace.session(), layout,
					new JacksonEventSerializer());
			String tag = "streamed-" + bucketing + "-" + System.nanoTime();
			long[] heads = new long[3];
			for (int minute = 0; minute < 70; minute++) {
				this.clock.advance(Duration.ofMinutes(1));
				int writer = minute % 3;
				// Every other append also carries the refining tag; the others are walked and refined away.
				String[] tags = (minute % 2 == 0) ? new String[] { tag, tag + "-also" } : new String[] { tag };
				heads[writer] = result(journal.append(tag + "-" + writer, heads[writer], tagged(2, tags)))
					.lastSequenceNr();
			}
			TagFilter filter = TagFilter.all(tag, tag + "-also");
			List<String> paged = walk(query, filter, 7);
			assertThat(paged).as(bucketing + ": 35 appends of 2 carry both tags").hasSize(70);

			List<String> streamed = new ArrayList<>();
			TagOffset end = result(query.forEachCurrentEventByTag(filter, TagOffset.START, AccountEvent.class,
					(e) -> streamed.add(e.event().persistenceId() + "#" + e.event().sequenceNr())));
			assertThat(streamed).as(bucketing + ": streamed from the start").containsExactlyElementsOf(paged);
			// The last examined row is the last append's second event (minute 69 is odd: refined away).
			assertThat(end.persistenceId() + "#" + end.sequenceNr()).as(bucketing + ": offset after the walk")
				.isEqualTo(tag + "-0#" + heads[0]);

			EventsPage<AccountEvent> first = result(query.currentEventsByTag(filter, TagOffset.START, 31,
					AccountEvent.class));
			List<String> rest = new ArrayList<>();
			result(query.forEachCurrentEventByTag(filter, first.resumeAfter(), AccountEvent.class,
					(e) -> rest.add(e.event().persistenceId() + "#" + e.event().sequenceNr())));
			List<String> expectedRest = paged.subList(first.events().size(), paged.size());
			assertThat(rest).as(bucketing + ": streamed from a middle offset").containsExactlyElementsOf(expectedRest);
		}
	}

	@Test
	void aReplayAcrossPartitionsReadsEveryEventInOrder() {
		CassandraJournalOptions small = this.options.withPartitionSize(7).withEventsTable("small_partitions");
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), small, new JacksonEventSerializer());
		String pid = "replay-" + System.nanoTime();
		result(journal.append(pid, 0, tagged(40)));
		List<Long> seen = new ArrayList<>();
		long last = result(journal.replay(pid, 3, 38, AccountEvent.class, (e) -> seen.add(e.sequenceNr())));
		assertThat(last).isEqualTo(38);
		assertThat(seen).as("6 partitions of 7, driver pages of 5").hasSize(36).isSorted().startsWith(3L).endsWith(38L);
		List<Long> contiguous = new ArrayList<>();
		io.cassandrajournal.journal.ReplayResult replayed = result(journal.replayContiguous(pid, 1, Long.MAX_VALUE,
				AccountEvent.class, (e) -> contiguous.add(e.sequenceNr())));
		assertThat(contiguous).hasSize(40).isSorted();
		assertThat(replayed.crashGaps()).isEmpty();
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
