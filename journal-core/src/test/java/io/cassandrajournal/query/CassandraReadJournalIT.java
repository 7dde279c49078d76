package io.cassandrajournal.query;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.AccountEvent.Opened;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The query side on a real node.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CassandraReadJournalIT {

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	private CassandraJournal journal;

	private CassandraReadJournal query;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		this.journal = CassandraJournal.create(keyspace.session(), this.options, new JacksonEventSerializer());
		this.query = CassandraReadJournal.create(this.journal, keyspace.session(), this.options,
				new JacksonEventSerializer());
	}

	private List<String> idsMatching(TagFilter filter) {
		List<String> ids = new ArrayList<>();
		result(this.query.forEachCurrentEventByTag(filter, TagOffset.START, AccountEvent.class,
				(e) -> ids.add(e.event().persistenceId() + "#" + e.event().sequenceNr())));
		return ids;
	}

	@Test
	void filtersSelectExactlyTheMatchingEvents() {
		String run = "f" + System.nanoTime();
		String debit = run + "-debit";
		String credit = run + "-credit";
		String test = run + "-test";
		result(this.journal.append(run + "-a", 0, List.of(EventToAppend.of(new Opened(), debit),
				EventToAppend.of(new Deposited(1), debit, credit), EventToAppend.of(new Deposited(2), credit),
				EventToAppend.of(new Deposited(3), debit, test), EventToAppend.of(new Deposited(4), "other"))));

		assertThat(idsMatching(TagFilter.tag(debit))).containsExactly(run + "-a#1", run + "-a#2", run + "-a#4");
		assertThat(idsMatching(TagFilter.any(debit, credit))).as("each event once although in two partitions")
			.containsExactly(run + "-a#1", run + "-a#2", run + "-a#3", run + "-a#4");
		assertThat(idsMatching(TagFilter.all(debit, credit))).containsExactly(run + "-a#2");
		assertThat(idsMatching(TagFilter.any(debit, credit).andNot(test)))
			.containsExactly(run + "-a#1", run + "-a#2", run + "-a#3");
		assertThat(this.query.scansJournal(TagFilter.of(List.of(), List.of(), List.of(test))))
			.as("not-only filters are answered by a journal scan (TagPlansIT)").isTrue();
	}

	@Test
	void pagesResumeAfterTheLastExaminedRowEvenWhenRefinedAway() {
		String run = "p" + System.nanoTime();
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 0; i < 30; i++) {
			events.add((i % 3 == 0) ? EventToAppend.of(new Deposited(i), run, run + "-x") : EventToAppend.of(new Deposited(i), run));
		}
		result(this.journal.append(run + "-a", 0, events));
		TagFilter filter = TagFilter.all(run, run + "-x");
		List<Long> seen = new ArrayList<>();
		TagOffset after = TagOffset.START;
		EventsPage<AccountEvent> page;
		do {
			page = result(this.query.currentEventsByTag(filter, after, 4, AccountEvent.class));
			page.events().forEach((e) -> seen.add(e.event().sequenceNr()));
			after = page.resumeAfter();
		}
		while (!page.caughtUp());
		assertThat(seen).containsExactly(1L, 4L, 7L, 10L, 13L, 16L, 19L, 22L, 25L, 28L);
	}

	@Test
	void eventsByPersistenceIdPageBySequenceNumber() {
		String id = "pid-" + System.nanoTime();
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 1; i <= 7; i++) {
			events.add(EventToAppend.of(new Deposited(i)));
		}
		result(this.journal.append(id, 0, events));
		List<PersistentEvent<AccountEvent>> page = result(this.query.eventsByPersistenceId(id, 3, 3, AccountEvent.class));
		assertThat(page).extracting(PersistentEvent::sequenceNr).containsExactly(3L, 4L, 5L);
		assertThat(result(this.query.eventsByPersistenceId(id, 8, 3, AccountEvent.class))).isEmpty();
	}

	@Test
	void livePersistenceIdsEmitsKnownIdsThenNewOnes() {
		LivePersistenceIds live = this.query.livePersistenceIds();
		String before = "live-before-" + System.nanoTime();
		result(this.journal.append(before, 0, List.of(EventToAppend.of(new Opened()))));
		List<String> first = result(live.poll());
		assertThat(first).contains(before);
		String after = "live-after-" + System.nanoTime();
		result(this.journal.append(after, 0, List.of(EventToAppend.of(new Opened()))));
		// written by another process: only the listing can find it
		this.keyspace.session().execute("INSERT INTO all_persistence_ids (tag, persistence_id) VALUES ('_all', ?)",
				after + "-elsewhere");
		assertThat(result(live.poll())).containsExactlyInAnyOrder(after, after + "-elsewhere");
		assertThat(result(live.poll())).isEmpty();
	}

	@Test
	void currentPersistenceIdsVisitsTenThousandIdsPageByPage() {
		CqlSession session = this.keyspace.session();
		String prefix = "many-" + System.nanoTime() + "-";
		PreparedStatement insert = session.prepare("INSERT INTO all_persistence_ids (tag, persistence_id) VALUES ('_all', ?)");
		List<CompletableFuture<?>> writes = new ArrayList<>();
		for (int i = 0; i < 10_000; i++) {
			writes.add(session.executeAsync(insert.bind(prefix + String.format("%05d", i))).toCompletableFuture());
			if (writes.size() == 256) {
				CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
				writes.clear();
			}
		}
		CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new)).join();
		long count = 0;
		int pages = 0;
		int largestPage = 0;
		String last = null;
		String after = null;
		List<String> page;
		do {
			page = result(this.query.currentPersistenceIds(after, 500));
			pages++;
			largestPage = Math.max(largestPage, page.size());
			for (String id : page) {
				if (id.startsWith(prefix)) {
					assertThat(last == null || id.compareTo(last) > 0).isTrue();
					last = id;
					count++;
				}
			}
			after = page.isEmpty() ? after : page.get(page.size() - 1);
		}
		while (page.size() == 500);
		assertThat(count).isEqualTo(10_000);
		assertThat(pages).isGreaterThanOrEqualTo(20);
		assertThat(largestPage).isEqualTo(500);
	}

	@Test
	void backfillIndexesEventsAppendedWithTheIndexOffWithoutDuplicates() {
		String tag = "backfill-" + System.nanoTime();
		CassandraJournalOptions noIndex = this.options.withUseTagIndex(false);
		CassandraJournal unindexed = CassandraJournal.create(this.keyspace.session(), noIndex, new JacksonEventSerializer());
		for (int i = 0; i < 5; i++) {
			result(unindexed.append(tag + "-" + i, 0,
					List.of(EventToAppend.of(new Opened(), tag), EventToAppend.of(new Deposited(i), tag))));
		}
		assertThat(idsMatching(TagFilter.tag(tag))).isEmpty();
		TagIndexBackfill backfill = TagIndexBackfill.create(this.journal, this.keyspace.session(), this.options);
		assertThat(result(backfill.run())).isGreaterThanOrEqualTo(10);
		assertThat(idsMatching(TagFilter.tag(tag))).hasSize(10).doesNotHaveDuplicates();
		result(backfill.run());
		assertThat(idsMatching(TagFilter.tag(tag))).hasSize(10);
	}

	@Test
	void liveFeedDeliversEveryEventOfSlowAndFastWritersInPerEntityOrder() throws Exception {
		FeedSettings safe = FeedSettings.DEFAULTS.withConsistencyWindow(Duration.ofSeconds(2))
			.withBacktrackWindow(Duration.ofSeconds(10))
			.withPageSize(200);
		FeedRun run = runWritersAgainstFeed(safe, WRITING);
		assertThat(run.delivered).as("nothing delivered twice").doesNotHaveDuplicates();
		assertEveryEventDelivered(run);
		Map<String, Long> lastSeq = new HashMap<>();
		for (String key : run.delivered) {
			String pid = key.substring(0, key.indexOf('#'));
			long seq = Long.parseLong(key.substring(key.indexOf('#') + 1));
			assertThat(seq).as("order of " + pid).isGreaterThan(lastSeq.getOrDefault(pid, 0L));
			lastSeq.put(pid, seq);
		}
	}

	@Test
	void theTrailingSweepAloneCatchesLateEventsWithoutDuplicates() throws Exception {
		FeedSettings sweepOnly = FeedSettings.DEFAULTS.withConsistencyWindow(Duration.ZERO)
			.withBacktrackWindow(Duration.ofSeconds(10))
			.withPageSize(200);
		FeedRun run = runWritersAgainstFeed(sweepOnly, WRITING);
		assertThat(run.delivered).as("nothing delivered twice").doesNotHaveDuplicates();
		assertEveryEventDelivered(run);
	}

	@Test
	void withoutTheWindowsTheSameRunMissesLateEvents() throws Exception {
		FeedSettings unsafe = FeedSettings.DEFAULTS.withConsistencyWindow(Duration.ZERO)
			.withBacktrackWindow(Duration.ZERO)
			.withPageSize(200);
		FeedRun run = runWritersAgainstFeed(unsafe, WRITING);
		Set<String> missed = new HashSet<>(run.appended);
		missed.removeAll(run.delivered);
		assertThat(missed).as("late events the head read passed").isNotEmpty();
	}

	@Test
	void aBucketedIndexLosesNothingWhileTheFeedCrossesBuckets() throws Exception {
		// Minute buckets and a clock 60 times faster than real time: the writers cross into a new bucket every
		// real second, and the slow writers' 1.5 s delay is 90 s of stamped time, inside the 10 min backtrack.
		long base = System.currentTimeMillis();
		java.time.Clock fast = new java.time.Clock() {
			@Override
			public long millis() {
				return base + (System.currentTimeMillis() - base) * 60;
			}

			@Override
			public java.time.Instant instant() {
				return java.time.Instant.ofEpochMilli(millis());
			}

			@Override
			public java.time.ZoneId getZone() {
				return java.time.ZoneOffset.UTC;
			}

			@Override
			public java.time.Clock withZone(java.time.ZoneId zone) {
				return this;
			}
		};
		CassandraJournalOptions bucketed = this.options.withTagBucketing(io.cassandrajournal.TagBucketing.MINUTE)
			.withClock(fast);
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), bucketed, new JacksonEventSerializer());
		CassandraReadJournal query = CassandraReadJournal.create(journal, this.keyspace.session(), bucketed,
				new JacksonEventSerializer());
		FeedSettings sweep = FeedSettings.DEFAULTS.withConsistencyWindow(Duration.ZERO)
			.withBacktrackWindow(Duration.ofMinutes(10))
			.withPageSize(200);
		FeedRun run = runWritersAgainstFeed(query, bucketed, sweep, Duration.ofSeconds(10));
		assertThat(run.delivered).as("nothing delivered twice").doesNotHaveDuplicates();
		assertEveryEventDelivered(run);
		long buckets = this.keyspace.session()
			.execute("SELECT bucket FROM " + bucketed.tagBucketsTable() + " WHERE tag = ?",
					run.appended.iterator().next().replaceAll("-w[0-9]+#[0-9]+$", ""))
			.all()
			.size();
		assertThat(buckets).as("minute buckets the run crossed").isGreaterThanOrEqualTo(5);
	}

	/** Compares as sets, but reports only the difference (the full sets are thousands of ids). */
	private static void assertEveryEventDelivered(FeedRun run) {
		Set<String> missed = new java.util.TreeSet<>(run.appended);
		run.delivered.forEach(missed::remove);
		assertThat(missed).as("appended but not delivered (of " + run.appended.size() + ")").isEmpty();
		Set<String> unknown = new java.util.TreeSet<>(run.delivered);
		unknown.removeAll(run.appended);
		assertThat(unknown).as("delivered but never appended").isEmpty();
	}

	record FeedRun(Set<String> appended, List<String> delivered) {
	}

	/** One poll; sleeps like an idle poller only when the page was not full. @return events delivered */
	private static int pollOnce(LiveTagFeed feed, FeedSettings settings, List<String> delivered) throws Exception {
		List<TaggedEvent<String>> batch = result(feed.poll());
		batch.forEach((e) -> delivered.add(e.event().persistenceId() + "#" + e.event().sequenceNr()));
		if (batch.size() < settings.pageSize() / 2) {
			Thread.sleep(200);
		}
		return batch.size();
	}

	/**
	 * A fast writer's pace: at most one append per 10 ms (100 a second each, 500 for the five). Unpaced, they
	 * appended as fast as the machine allowed (7,000 to 25,000 events in 10 s), and the single reader then spent
	 * up to 20 s draining them: the run's length depended on the machine, not on the windows under test. Paced,
	 * the head still passes every late batch many times over.
	 */
	private static final Duration FAST_WRITER_PACE = Duration.ofMillis(10);

	/**
	 * How long the writers of the three unbucketed feed runs write: about 3,000 events from the fast writers and
	 * a dozen late batches from the slow ones, each passed by the head. Until 2026-12-02 30 s for the first run
	 * and 10 s for the others: more of the same interleavings. (The bucketed run keeps 10 s: at 60 times real time
	 * that is about ten minute buckets, of which it must cross at least five.)
	 */
	private static final Duration WRITING = Duration.ofSeconds(6);

	/**
	 * 8 writers on their own persistenceIds append tagged events; 3 of them write their batches 1.5 s after
	 * stamping (more than the feed's poll interval), the other 5 at {@link #FAST_WRITER_PACE}. A live feed
	 * follows from the start of the tag.
	 */
	private FeedRun runWritersAgainstFeed(FeedSettings settings, Duration duration) throws Exception {
		return runWritersAgainstFeed(this.query, this.options, settings, duration);
	}

	private FeedRun runWritersAgainstFeed(CassandraReadJournal query, CassandraJournalOptions options,
			FeedSettings settings, Duration duration) throws Exception {
		String tag = "feed-" + System.nanoTime();
		LiveTagFeed feed = query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START, settings);
		Set<String> appended = ConcurrentHashMap.newKeySet();
		List<String> delivered = new ArrayList<>();
		AtomicBoolean writing = new AtomicBoolean(true);
		ExecutorService pool = Executors.newFixedThreadPool(8);
		List<Future<?>> writers = new ArrayList<>();
		for (int w = 0; w < 8; w++) {
			boolean slow = w < 3;
			String pid = tag + "-w" + w;
			writers.add(pool.submit(() -> {
				FeedRunWriter writer = new FeedRunWriter(this.keyspace.session(), options, slow);
				long seq = 0;
				long next = System.nanoTime();
				while (writing.get()) {
					seq = result(writer.journal.append(pid, seq, List.of(EventToAppend.of(new Deposited(1), tag))))
						.lastSequenceNr();
					appended.add(pid + "#" + seq);
					if (!slow) {
						// Pacing of a load generator, not a wait for a condition.
						next = Math.max(next + FAST_WRITER_PACE.toNanos(), System.nanoTime());
						LockSupport.parkNanos(next - System.nanoTime());
					}
				}
				return null;
			}));
		}
		long end = System.nanoTime() + duration.toNanos();
		while (System.nanoTime() < end) {
			pollOnce(feed, settings, delivered);
		}
		writing.set(false);
		for (Future<?> writer : writers) {
			writer.get(1, TimeUnit.MINUTES);
		}
		pool.shutdown();
		// Drain: until the head has read everything and the sweep has passed the last late events. Every writer has
		// returned, so every batch has landed. The sweep reads a page per poll behind the head and moves past an
		// instant only once it is a backtrack window old, so "the sweep has reached the head" already means "a
		// backtrack window after the last event": every row the head passed has been swept too. (Until 2026-12-02 the
		// drain also waited a fixed backtrack + consistency window + 3 s from the writers' end before looking:
		// 3 to 5 s of nothing per run.) The reader is throughput-bound (a page per poll): on a slow machine the head
		// may still be behind, hence the generous bound.
		long drainStart = System.nanoTime();
		long hardStop = System.nanoTime() + TimeUnit.MINUTES.toNanos(3);
		while (System.nanoTime() < hardStop) {
			int size = pollOnce(feed, settings, delivered);
			if (size == 0 && feed.caughtUp() && feed.safeOffset().equals(feed.headOffset())) {
				break;
			}
		}
		System.out.printf("feed run %s: %d appended, drained in %d ms%n", tag, appended.size(),
				TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - drainStart));
		assertThat(appended).hasSizeGreaterThan(100);
		return new FeedRun(appended, delivered);
	}

	private static final class FeedRunWriter {

		private final CassandraJournal journal;

		FeedRunWriter(CqlSession session, CassandraJournalOptions options, boolean slow) {
			FaultInjectingSession faults = new FaultInjectingSession(session);
			if (slow) {
				faults.delayBatches(Duration.ofMillis(1500));
			}
			this.journal = CassandraJournal.create(faults.session(), options, new JacksonEventSerializer());
		}

	}

	@Test
	void walksTwoHundredThousandTaggedEventsAndReplaysOneHundredThousandInASmallHeap() throws Exception {
		String tag = "bulk-" + System.nanoTime();
		String big = tag + "-big";
		long head = 0;
		for (int i = 0; i < 200; i++) {
			head = result(this.journal.append(big, head, batch(500, tag))).lastSequenceNr();
		}
		ExecutorService pool = Executors.newFixedThreadPool(8);
		List<Future<?>> writers = new ArrayList<>();
		for (int p = 0; p < 100; p++) {
			String pid = tag + "-" + p;
			writers.add(pool.submit(() -> {
				long seq = 0;
				for (int i = 0; i < 2; i++) {
					seq = result(this.journal.append(pid, seq, batch(500, tag))).lastSequenceNr();
				}
				return null;
			}));
		}
		for (Future<?> writer : writers) {
			writer.get(5, TimeUnit.MINUTES);
		}
		pool.shutdown();

		long maxHeap = Runtime.getRuntime().maxMemory();
		assertThat(maxHeap).as("this test runs with -Xmx256m").isLessThanOrEqualTo(256L * 1024 * 1024 + 16 * 1024 * 1024);
		AtomicLong walked = new AtomicLong();
		result(this.query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START, AccountEvent.class,
				(e) -> walked.incrementAndGet()), Duration.ofMinutes(5));
		assertThat(walked.get()).isEqualTo(200_000);
		AtomicLong replayed = new AtomicLong();
		result(this.journal.replay(big, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> replayed.incrementAndGet()),
				Duration.ofMinutes(5));
		assertThat(replayed.get()).isEqualTo(100_000);
	}

	private static List<EventToAppend> batch(int size, String tag) {
		List<EventToAppend> events = new ArrayList<>(size);
		for (int i = 0; i < size; i++) {
			events.add(EventToAppend.of(new Deposited(i), tag));
		}
		return events;
	}

}
