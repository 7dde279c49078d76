package io.cassandrajournal.retention;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.DroppedTagRange;
import io.cassandrajournal.query.EventsPage;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.LiveTagFeed;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagIndexBackfill;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.query.TaggedEvent;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.JournalLogs;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tag buckets a retention cleanup dropped, outside projections (issue 18; docs/reliability.md, finding 23): a plain
 * tag query reading from before the dropped range says so, and the tag index backfill does not refill dropped
 * buckets (which the drop mark would then contradict).
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DroppedTagBucketsIT {

	private TestKeyspace keyspace;

	private JournalLogs logs;

	@BeforeAll
	void keyspace(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.logs = JournalLogs.capture();
	}

	@AfterAll
	void detach() {
		this.logs.close();
	}

	private List<ILoggingEvent> logsAbout(String what, Level level) {
		return this.logs.about(what, level);
	}

	private static List<EventToAppend> deposits(int count, String tag) {
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			events.add(EventToAppend.of(new Deposited(1), tag));
		}
		return events;
	}

	private CassandraJournalOptions bucketed(SettableClock clock) {
		return CassandraJournalOptions.create().withKeyspace(this.keyspace.name()).withUseTagIndex(true)
			.withTagBucketing(TagBucketing.MINUTE).withClock(clock);
	}

	private CassandraJournal journal(SettableClock clock) {
		return CassandraJournal.create(this.keyspace.session(), bucketed(clock), new JacksonEventSerializer());
	}

	private CassandraReadJournal query(CassandraJournal journal) {
		return query(journal, this.keyspace.session());
	}

	private static CassandraReadJournal query(CassandraJournal journal, CqlSession session) {
		return CassandraReadJournal.create(journal, session, journal.options(), new JacksonEventSerializer());
	}

	/**
	 * A tag with two events in each of three minute buckets, the first two buckets dropped.
	 * @param journal the journal that wrote them, on {@code clock}
	 * @param clock the journal's clock, a minute past the last events
	 * @param tag the tag
	 * @param id the entity that holds them (sequence numbers 1 to 6)
	 * @param range the dropped range: events 5 and 6 are left in the tag index
	 */
	private record DroppedRange(CassandraJournal journal, SettableClock clock, String tag, String id,
			DroppedTagRange range) {

		Instant mark() {
			return this.range.droppedBefore();
		}

	}

	/**
	 * Appends two events of a new tag at {@code day}T08:00:10Z and a minute and two minutes later, with the clock one
	 * minute further on, then drops the tag buckets before 08:02.
	 * @param name the prefix of the tag and the entity
	 * @param day the day, {@code yyyy-MM-dd}: one per test, so that one test's drop does not reach another's events
	 */
	private DroppedRange threeMinutesWithTheFirstTwoDropped(String name, String day) {
		SettableClock clock = new SettableClock(Instant.parse(day + "T08:00:10Z"));
		CassandraJournal journal = journal(clock);
		String tag = name + "-" + System.nanoTime();
		String id = name + "-" + UUID.randomUUID();
		for (int minute = 0; minute < 3; minute++) {
			result(journal.append(id, 2L * minute, deposits(2, tag)));
			clock.advance(Duration.ofMinutes(1));
		}
		Instant mark = Instant.parse(day + "T08:02:00Z");
		result(JournalCleanup.create(this.keyspace.session(), journal).dropTagBucketsBefore(mark));
		return new DroppedRange(journal, clock, tag, id, new DroppedTagRange(tag, mark));
	}

	private static List<Long> sequenceNrs(EventsPage<AccountEvent> page) {
		return page.events().stream().map((e) -> e.event().sequenceNr()).toList();
	}

	@Test
	void aTagQueryFromBeforeADroppedRangeSaysSo() {
		DroppedRange dropped = threeMinutesWithTheFirstTwoDropped("query", "2026-04-01");
		String tag = dropped.tag();

		CassandraReadJournal query = query(dropped.journal());
		EventsPage<AccountEvent> fromStart = result(
				query.currentEventsByTag(TagFilter.tag(tag), TagOffset.START, 100, AccountEvent.class));
		assertThat(sequenceNrs(fromStart)).containsExactly(5L, 6L);
		assertThat(fromStart.dropped()).isEqualTo(dropped.range());
		assertThat(logsAbout(tag, Level.WARN)).singleElement()
			.satisfies((e) -> assertThat(e.getFormattedMessage()).contains("dropped")
				.contains(dropped.mark().toString()));

		// From an offset past the dropped range: nothing is missing, nothing is said.
		EventsPage<AccountEvent> past = result(query.currentEventsByTag(TagFilter.tag(tag),
				fromStart.events().get(0).offset(), 100, AccountEvent.class));
		assertThat(sequenceNrs(past)).containsExactly(6L);
		assertThat(past.dropped()).isNull();

		// The streaming form returns an offset only: it says so in the log (a read journal of its own, so it logs).
		List<Long> streamed = new ArrayList<>();
		result(query(dropped.journal()).forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START,
				AccountEvent.class, (e) -> streamed.add(e.event().sequenceNr())));
		assertThat(streamed).containsExactly(5L, 6L);
		assertThat(logsAbout(tag, Level.WARN)).hasSize(2);
	}

	/**
	 * A plain live feed (not a projection, which its own check tells) walking across a range a cleanup dropped used to
	 * deliver what was left without a word. It reports the range ({@code droppedRanges()}) and logs one WARN; a feed
	 * that starts past the range reports nothing (docs/reliability.md, finding 30).
	 */
	@Test
	void aLiveFeedWalkingAcrossADroppedRangeSaysSo() {
		DroppedRange dropped = threeMinutesWithTheFirstTwoDropped("live", "2026-04-03");
		String tag = dropped.tag();

		CassandraReadJournal query = query(dropped.journal());
		LiveTagFeed feed = query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, FeedSettings.DEFAULTS);
		List<TaggedEvent<String>> delivered = new ArrayList<>();
		pollUntil(feed, delivered, 2);
		assertThat(delivered).extracting((e) -> e.event().sequenceNr()).containsExactly(5L, 6L);
		assertThat(feed.droppedRanges()).containsExactly(dropped.range());
		assertThat(logsAbout(tag, Level.WARN)).anySatisfy((e) -> assertThat(e.getFormattedMessage())
			.contains("Live feed").contains(dropped.mark().toString()));
		result(feed.poll());
		assertThat(feed.droppedRanges()).as("once").hasSize(1);

		LiveTagFeed past = query.liveEventsByTag(TagFilter.tag(tag), delivered.get(0).offset(), FeedSettings.DEFAULTS);
		assertThat(result(past.poll())).extracting((e) -> e.event().sequenceNr()).containsExactly(6L);
		assertThat(past.droppedRanges()).as("a feed past the range").isEmpty();
	}

	/**
	 * Polls until {@code count} events were delivered in all, five polls at most (the events are older than the
	 * feed's windows: each poll reads on from where the last one stopped, no waiting).
	 */
	private static void pollUntil(LiveTagFeed feed, List<TaggedEvent<String>> delivered, int count) {
		for (int poll = 0; poll < 5 && delivered.size() < count; poll++) {
			delivered.addAll(result(feed.poll()));
		}
	}

	/**
	 * The drop marks are diagnostic for a live feed too: a failed read of them (one driver timeout) does not fail the
	 * poll, the events keep flowing, and the marks are read again at the next poll, which reports the range then
	 * (docs/reliability.md, finding 30, item 4; no test injected that failure before).
	 */
	@Test
	void aFailedReadOfTheDropMarksDoesNotFailTheLiveFeedsPoll() {
		DroppedRange dropped = threeMinutesWithTheFirstTwoDropped("live-failed-mark", "2026-04-04");
		FaultInjectingSession faults = new FaultInjectingSession(this.keyspace.session());
		LiveTagFeed feed = query(dropped.journal(), faults.session()).liveEventsByTag(TagFilter.tag(dropped.tag()),
				TagOffset.START, FeedSettings.DEFAULTS);

		faults.failOnce("bucket < 0 LIMIT 1");
		List<TaggedEvent<String>> delivered = new ArrayList<>(result(feed.poll()));
		assertThat(faults.injected()).as("the mark read of the first poll failed").isEqualTo(1);
		assertThat(feed.droppedRanges()).as("nothing known yet").isEmpty();

		delivered.addAll(result(feed.poll()));
		assertThat(feed.droppedRanges()).as("read again at the next poll").containsExactly(dropped.range());
		assertThat(logsAbout(dropped.tag(), Level.WARN)).singleElement()
			.satisfies((e) -> assertThat(e.getFormattedMessage()).contains("Live feed")
				.contains(dropped.mark().toString()));
		pollUntil(feed, delivered, 2);
		assertThat(delivered).extracting((e) -> e.event().sequenceNr()).containsExactly(5L, 6L);

		result(dropped.journal().append(dropped.id(), 6, deposits(1, dropped.tag())));
		dropped.clock().advance(Duration.ofSeconds(1));
		pollUntil(feed, delivered, 3);
		assertThat(delivered).as("later events too").extracting((e) -> e.event().sequenceNr())
			.containsExactly(5L, 6L, 7L);
		assertThat(faults.injected()).as("one failure in all").isEqualTo(1);
	}

	/**
	 * The drop mark is diagnostic: a failed read of it (one driver timeout) costs the query its report, not its
	 * result. The streaming form used to fail after every event had been delivered, so a caller that retried
	 * handled them twice (finding 23, Review, item 1).
	 */
	@Test
	void aFailedReadOfTheDropMarkDoesNotFailTheTagQuery() {
		SettableClock clock = new SettableClock(Instant.parse("2026-04-02T08:00:10Z"));
		CassandraJournal journal = journal(clock);
		String tag = "failed-mark-" + System.nanoTime();
		String id = "failed-mark-" + UUID.randomUUID();
		result(journal.append(id, 0, deposits(3, tag)));
		clock.advance(Duration.ofMinutes(1));
		FaultInjectingSession faults = new FaultInjectingSession(this.keyspace.session());
		CassandraReadJournal query = query(journal, faults.session());

		faults.failOnce("bucket < 0 LIMIT 1");
		EventsPage<AccountEvent> page = result(
				query.currentEventsByTag(TagFilter.tag(tag), TagOffset.START, 100, AccountEvent.class));
		assertThat(faults.injected()).as("the mark read failed").isEqualTo(1);
		assertThat(sequenceNrs(page)).containsExactly(1L, 2L, 3L);
		assertThat(page.dropped()).isNull();

		faults.failOnce("bucket < 0 LIMIT 1");
		List<Long> streamed = new CopyOnWriteArrayList<>();
		TagOffset end = result(query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START, AccountEvent.class,
				(e) -> streamed.add(e.event().sequenceNr())));
		assertThat(faults.injected()).as("the mark read failed again").isEqualTo(2);
		assertThat(streamed).as("each event once, and the call completes").containsExactly(1L, 2L, 3L);
		assertThat(end.sequenceNr()).isEqualTo(3L);
		assertThat(logsAbout(tag, Level.WARN)).as("one warning for the failed mark reads of the tag")
			.singleElement()
			.satisfies((e) -> assertThat(e.getFormattedMessage()).contains("drop mark"));
	}

	/** A filter naming two tags whose buckets were both dropped: each tag's dropped range is logged. */
	@Test
	void everyTagOfTheFilterOverItsMarkIsLogged() {
		SettableClock clock = new SettableClock(Instant.parse("2026-04-03T08:00:10Z"));
		CassandraJournal journal = journal(clock);
		String first = "two-a-" + System.nanoTime();
		String second = "two-b-" + System.nanoTime();
		String id = "two-" + UUID.randomUUID();
		result(journal.append(id, 0, deposits(1, first)));
		result(journal.append(id, 1, deposits(1, second)));
		clock.advance(Duration.ofMinutes(2));
		result(journal.append(id, 2, deposits(1, first)));
		clock.advance(Duration.ofMinutes(1));
		Instant mark = Instant.parse("2026-04-03T08:01:00Z");
		result(JournalCleanup.create(this.keyspace.session(), journal).dropTagBucketsBefore(mark));

		EventsPage<AccountEvent> page = result(
				query(journal).currentEventsByTag(TagFilter.any(first, second), TagOffset.START, 100, AccountEvent.class));
		assertThat(sequenceNrs(page)).containsExactly(3L);
		assertThat(page.dropped()).as("the first tag's range").isEqualTo(new DroppedTagRange(first, mark));
		assertThat(logsAbout(first, Level.WARN)).as("one line per tag").hasSize(2)
			.anySatisfy((e) -> assertThat(e.getFormattedMessage()).contains("'" + first + "' stamped before"))
			.anySatisfy((e) -> assertThat(e.getFormattedMessage()).contains("'" + second + "' stamped before"));
	}

	@Test
	void theTagIndexBackfillDoesNotRefillDroppedBuckets() {
		SettableClock clock = new SettableClock(Instant.parse("2026-05-01T08:00:10Z"));
		CassandraJournal journal = journal(clock);
		JournalCleanup cleanup = JournalCleanup.create(this.keyspace.session(), journal);
		String tag = "backfill-" + System.nanoTime();
		String id = "backfill-" + UUID.randomUUID();
		result(journal.append(id, 0, deposits(2, tag)));
		clock.advance(Duration.ofMinutes(2));
		result(journal.append(id, 2, deposits(2, tag)));
		clock.advance(Duration.ofMinutes(1));
		Instant mark = Instant.parse("2026-05-01T08:01:00Z");
		assertThat(result(cleanup.dropTagBucketsBefore(mark))).extracting(TagBucket::tag).contains(tag);

		// Run again (for instance after turning the index on elsewhere): the events of the dropped bucket are read.
		result(TagIndexBackfill.create(journal, this.keyspace.session(), journal.options()).run());

		EventsPage<AccountEvent> page = result(
				query(journal).currentEventsByTag(TagFilter.tag(tag), TagOffset.START, 100, AccountEvent.class));
		assertThat(sequenceNrs(page)).as("the dropped bucket stays dropped").containsExactly(3L, 4L);
		assertThat(result(cleanup.planTagBuckets(mark))).as("no bucket listed again before the mark")
			.noneMatch((bucket) -> bucket.tag().equals(tag));
	}

	/**
	 * Two runs of one backfill at once (docs/reliability.md, finding 23, R2's review of a91a7db, item 5): the drop
	 * marks read and the rows skipped were the instance's, and {@code run()} cleared them, so a second run starting
	 * while the first waited for a tag's drop mark emptied the map the first then took that mark from (a null: the
	 * first run failed). Here the second run starts while the first one's first drop-mark read is being answered;
	 * both must complete, and the tag's events stay indexed.
	 */
	@Test
	void twoRunsOfTheTagIndexBackfillAtOnceBothComplete() {
		SettableClock clock = new SettableClock(Instant.parse("2026-06-01T08:00:10Z"));
		CassandraJournal journal = journal(clock);
		String tag = "two-runs-" + System.nanoTime();
		String id = "two-runs-" + UUID.randomUUID();
		result(journal.append(id, 0, deposits(3, tag)));
		FaultInjectingSession faults = new FaultInjectingSession(this.keyspace.session());
		TagIndexBackfill backfill = TagIndexBackfill.create(journal, faults.session(), journal.options());
		AtomicReference<CompletableFuture<Long>> second = new AtomicReference<>();
		// The first drop-mark read (the first run's): its answer comes after the second run has started.
		faults.answerAfter(FaultInjectingSession.cqlContaining("AND bucket < 0 LIMIT 1"), 0, () -> {
			second.set(backfill.run().toCompletableFuture());
			return CompletableFuture.completedFuture(null);
		});

		CompletableFuture<Long> first = backfill.run().toCompletableFuture();
		// Bounds: the events of this class's keyspace, a few dozen; 30 s for each run.
		assertThat(result(first, Duration.ofSeconds(30))).as("the first run's rows").isGreaterThanOrEqualTo(3);
		assertThat(second.get()).as("the second run started during the first").isNotNull();
		assertThat(result(second.get(), Duration.ofSeconds(30))).as("the second run's rows").isGreaterThanOrEqualTo(3);
		EventsPage<AccountEvent> page = result(
				query(journal).currentEventsByTag(TagFilter.tag(tag), TagOffset.START, 100, AccountEvent.class));
		assertThat(sequenceNrs(page)).containsExactly(1L, 2L, 3L);
	}

}
