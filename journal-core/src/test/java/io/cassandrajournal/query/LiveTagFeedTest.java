package io.cassandrajournal.query;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.testing.SettableClock;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The feed's window logic against a scripted index, where the order of visibility and time is exact: this
 * is about which offsets the feed reads, not about Cassandra.
 */
class LiveTagFeedTest {

	/** Rows of one tag; a row is returned only once made visible. */
	static final class ScriptedIndex implements TagEventReader {

		private final TreeMap<TagOffset, Boolean> rows = new TreeMap<>();

		void add(long timestamp, String persistenceId, long sequenceNr, boolean visible) {
			this.rows.put(new TagOffset(timestamp, persistenceId, sequenceNr), visible);
		}

		void show(long timestamp, String persistenceId, long sequenceNr) {
			this.rows.put(new TagOffset(timestamp, persistenceId, sequenceNr), true);
		}

		@Override
		public CompletionStage<EventsPage<String>> read(TagFilter filter, TagOffset after, long upperTimestamp,
				int limit) {
			List<TaggedEvent<String>> page = new ArrayList<>();
			for (var row : this.rows.tailMap(after, false).entrySet()) {
				if (row.getKey().timestamp() > upperTimestamp || page.size() == limit) {
					break;
				}
				if (row.getValue()) {
					TagOffset offset = row.getKey();
					page.add(new TaggedEvent<>(offset, new PersistentEvent<>(offset.persistenceId(), offset.sequenceNr(),
							Instant.ofEpochMilli(offset.timestamp()), Set.of("t"), "{}")));
				}
			}
			TagOffset resume = page.isEmpty() ? after : page.get(page.size() - 1).offset();
			return CompletableFuture.completedFuture(new EventsPage<>(page, resume, page.size() < limit));
		}

	}

	/** A reader whose next read with a given upper bound fails once (one read timeout), then reads normally. */
	static final class FailingOnce implements TagEventReader {

		private final TagEventReader delegate;

		private long failUpper = Long.MIN_VALUE;

		FailingOnce(TagEventReader delegate) {
			this.delegate = delegate;
		}

		void failNextReadUpTo(long upperTimestamp) {
			this.failUpper = upperTimestamp;
		}

		@Override
		public CompletionStage<EventsPage<String>> read(TagFilter filter, TagOffset after, long upperTimestamp,
				int limit) {
			if (upperTimestamp == this.failUpper) {
				this.failUpper = Long.MIN_VALUE;
				return CompletableFuture.failedFuture(new IllegalStateException("injected read timeout"));
			}
			return this.delegate.read(filter, after, upperTimestamp, limit);
		}

	}

	private static List<String> poll(LiveTagFeed feed) {
		return result(feed.poll()).stream().map((e) -> e.event().persistenceId() + "#" + e.event().sequenceNr()).toList();
	}

	/** Counts the reads of a reader by whether their upper bound is the sweep's ({@code now - backtrack}). */
	static final class CountingReads implements TagEventReader {

		private final TagEventReader delegate;

		private final java.time.Clock clock;

		private final long backtrackMillis;

		int head;

		int sweep;

		CountingReads(TagEventReader delegate, java.time.Clock clock, Duration backtrack) {
			this.delegate = delegate;
			this.clock = clock;
			this.backtrackMillis = backtrack.toMillis();
		}

		@Override
		public CompletionStage<EventsPage<String>> read(TagFilter filter, TagOffset after, long upperTimestamp,
				int limit) {
			if (upperTimestamp <= this.clock.millis() - this.backtrackMillis) {
				this.sweep++;
			}
			else {
				this.head++;
			}
			return this.delegate.read(filter, after, upperTimestamp, limit);
		}

	}

	/**
	 * Issue 17: under a steady load the projection polled a few hundred times a second and every poll read the
	 * sweep's few milliseconds again (two tag reads per poll). Once the sweep has reached its floor, it reads again
	 * only when the floor has moved on by 1% of the window (100 ms of the default 10 s); a late event is still swept.
	 */
	@Test
	void theSweepReadsAgainOnlyOnceItsFloorMovedOnByOnePercentOfTheWindow() {
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(100_000));
		ScriptedIndex index = new ScriptedIndex();
		index.add(99_000, "a", 1, true);
		index.add(99_500, "late", 1, false);
		index.add(99_800, "b", 1, true);
		CountingReads reads = new CountingReads(index, clock, Duration.ofSeconds(10));
		LiveTagFeed feed = new LiveTagFeed(reads, TagFilter.tag("t"), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(10)), clock);
		assertThat(poll(feed)).containsExactly("a#1", "b#1");
		assertThat(reads.sweep).isEqualTo(1);

		for (int i = 0; i < 20; i++) {
			clock.advance(Duration.ofMillis(4));
			assertThat(poll(feed)).isEmpty();
		}
		assertThat(reads.head).isEqualTo(21);
		assertThat(reads.sweep).as("80 ms after the last sweep read: none").isEqualTo(1);
		clock.advance(Duration.ofMillis(20));
		assertThat(poll(feed)).isEmpty();
		assertThat(reads.sweep).as("100 ms after it: one").isEqualTo(2);

		// The late event becomes visible after the head passed it: swept once the floor passes its stamp.
		index.show(99_500, "late", 1);
		List<String> delivered = new ArrayList<>();
		for (int i = 0; i < 120; i++) {
			clock.advance(Duration.ofMillis(90));
			delivered.addAll(poll(feed));
		}
		assertThat(delivered).containsExactly("late#1");
	}

	/**
	 * The sweep's step is measured against the time floor ({@code now - backtrack}), not against the head: with no
	 * new events the floor is the head, which does not move, and a sweep just below it must still reach it
	 * (LateTagRowsIT's feed waited for its safe offset to pass the head: a first version of the step compared with
	 * the head and never read again).
	 */
	@Test
	void aSweepJustBelowAStillHeadReachesIt() {
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(109_950));
		ScriptedIndex index = new ScriptedIndex();
		index.add(100_000, "a", 1, true);
		LiveTagFeed feed = new LiveTagFeed(index, TagFilter.tag("t"), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(10)), clock);
		assertThat(poll(feed)).containsExactly("a#1");
		assertThat(feed.safeOffset().timestamp()).as("the sweep at its floor, 50 ms below the head").isEqualTo(99_950);

		clock.advance(Duration.ofSeconds(10));
		assertThat(poll(feed)).isEmpty();
		assertThat(feed.safeOffset()).isEqualTo(feed.headOffset());
	}

	@Test
	void aLateEventTheHeadPassedIsSweptEvenWhenTheHeadFallsBehindLater() {
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(100_000));
		ScriptedIndex index = new ScriptedIndex();
		index.add(98_000, "late", 1, false); // stamped, not written yet
		index.add(99_000, "a", 1, true);
		LiveTagFeed feed = new LiveTagFeed(index, TagFilter.tag("t"), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(10)).withPageSize(2), clock);

		assertThat(poll(feed)).containsExactly("a#1");
		assertThat(feed.caughtUp()).isTrue();

		// The late event becomes visible (within the backtrack window of its stamp), then a burst of new events
		// arrives, so that the next head read fills its page and the head is behind again. By now the late
		// event's stamp is older than now - backtrack.
		index.show(98_000, "late", 1);
		for (int i = 1; i <= 6; i++) {
			index.add(100_000 + i, "burst", i, true);
		}
		clock.set(Instant.ofEpochMilli(115_000));

		List<String> delivered = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			delivered.addAll(poll(feed));
		}
		assertThat(delivered).as("the head had passed 98,000 before the late event was visible: only the sweep can "
				+ "deliver it").contains("late#1");
		assertThat(delivered).containsOnlyOnce("late#1", "burst#1", "burst#6").doesNotContain("a#1");
	}

	/**
	 * Found by end-to-end-push-loaded (issue 17, docs/benchmarks.md): under a steady append load, a poll woken by
	 * another append read a row stamped after this process's append before that append's rows were written, so the
	 * head passed them and only the sweep, a backtrack window (10 s) later, delivered them. The append's wake now
	 * makes the next head read start again at its time stamp; rows read twice are delivered once.
	 */
	@Test
	void anAppendOfThisProcessThatTheHeadPassedBeforeItsRowsWereVisibleIsReadAtTheNextPoll() {
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(100_000));
		ScriptedIndex index = new ScriptedIndex();
		index.add(99_500, "probe", 1, false); // stamped, its rows not written yet
		index.add(99_600, "load", 1, true); // stamped later, already visible
		LiveTagFeed feed = new LiveTagFeed(index, TagFilter.tag("t"), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(10)).withPageSize(10), clock);
		assertThat(poll(feed)).containsExactly("load#1");

		// The probe's rows land and its append completes: the wake rewinds the head to the append's time stamp.
		index.show(99_500, "probe", 1);
		feed.rewind(99_500);
		clock.set(Instant.ofEpochMilli(100_010));
		assertThat(poll(feed)).as("delivered by the next poll, not by the sweep 10 s later").containsExactly("probe#1");
		assertThat(poll(feed)).isEmpty();
		clock.set(Instant.ofEpochMilli(115_000));
		assertThat(poll(feed)).as("the sweep delivers neither again").isEmpty();
	}

	/**
	 * The wake-up of an append whose events this feed delivered already (a newer append's poll read its rows) does
	 * not move the head back: under load, rewinding for every such wake-up kept the head re-reading rows it drops
	 * (review of the rewind, 2026-12-02). An append it did not deliver is still read again at the next poll.
	 */
	@Test
	void anAppendWhoseEventsTheFeedDeliveredDoesNotRewindTheHead() {
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(100_000));
		ScriptedIndex index = new ScriptedIndex();
		index.add(99_500, "a", 1, true);
		index.add(99_500, "a", 2, true);
		index.add(99_600, "b", 1, true);
		index.add(99_550, "c", 1, false); // stamped between them, its rows not written yet
		List<TagOffset> headReads = new ArrayList<>(); // where each read starts; a poll reads the head first
		TagEventReader recording = (filter, after, upper, limit) -> {
			headReads.add(after);
			return index.read(filter, after, upper, limit);
		};
		LiveTagFeed feed = new LiveTagFeed(recording, TagFilter.tag("t"), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(10)).withPageSize(10), clock);
		assertThat(poll(feed)).containsExactly("a#1", "a#2", "b#1");
		TagOffset head = feed.headOffset();

		headReads.clear();
		// a's append completes after b's poll delivered it
		assertThat(feed.rewindIfUndelivered(99_500, "a", 1, 2)).as("delivered already: no rewind").isFalse();
		clock.set(Instant.ofEpochMilli(100_010));
		assertThat(poll(feed)).isEmpty();
		assertThat(headReads).as("the head read starts where the head was, not at a's time stamp").first()
			.isEqualTo(head);

		index.show(99_550, "c", 1);
		headReads.clear();
		feed.rewind(99_550, "c", 1, 1); // c was not delivered: read again from its time stamp (the void form)
		clock.set(Instant.ofEpochMilli(100_020));
		assertThat(poll(feed)).containsExactly("c#1");
		assertThat(headReads).first().isEqualTo(new TagOffset(99_550, "", 0));
	}

	/**
	 * {@code rewind(long, String, long, long)} is public API and returned {@code void}: a caller compiled against it
	 * looks it up by that descriptor, so it keeps it (review of issue 17, P2); the answer comes from
	 * {@code rewindIfUndelivered}.
	 */
	@Test
	void rewindOfAnAppendKeepsItsVoidSignature() throws NoSuchMethodException {
		assertThat(LiveTagFeed.class.getMethod("rewind", long.class, String.class, long.class, long.class)
			.getReturnType()).isEqualTo(void.class);
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(100_000));
		ScriptedIndex index = new ScriptedIndex();
		index.add(99_500, "a", 1, true);
		LiveTagFeed feed = new LiveTagFeed(index, TagFilter.tag("t"), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(10)).withPageSize(10), clock);
		assertThat(poll(feed)).containsExactly("a#1");
		assertThat(feed.rewindIfUndelivered(99_500, "a", 1, 1)).isFalse();
		assertThat(feed.rewindIfUndelivered(99_600, "b", 1, 1)).as("not delivered: rewound").isTrue();
	}

	@Test
	void aPollWhoseSweepReadFailsMarksNothingAndTheNextPollDeliversItsHeadPage() {
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(100_000));
		ScriptedIndex index = new ScriptedIndex();
		index.add(99_000, "a", 1, true);
		FailingOnce reader = new FailingOnce(index);
		LiveTagFeed feed = new LiveTagFeed(reader, TagFilter.tag("t"), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(10)).withPageSize(10), clock);
		assertThat(poll(feed)).containsExactly("a#1");
		TagOffset safeBefore = feed.safeOffset();
		TagOffset headBefore = feed.headOffset();

		// New events; the head read of the next poll returns them, then its sweep read (up to now - 10 s)
		// fails once.
		index.add(100_500, "b", 1, true);
		index.add(100_600, "c", 1, true);
		clock.set(Instant.ofEpochMilli(101_000));
		reader.failNextReadUpTo(101_000 - 10_000);
		assertThatThrownBy(() -> poll(feed)).hasMessageContaining("injected read timeout");
		assertThat(feed.headOffset()).as("a failed poll leaves the head where it was").isEqualTo(headBefore);
		assertThat(feed.safeOffset()).isEqualTo(safeBefore);
		assertThat(feed.rememberedEvents()).as("and marks nothing as delivered").isEqualTo(1);

		List<String> delivered = new ArrayList<>();
		delivered.addAll(poll(feed));
		// Time passes beyond the backtrack window, so the sweep passes b and c too.
		clock.set(Instant.ofEpochMilli(130_000));
		for (int i = 0; i < 5; i++) {
			delivered.addAll(poll(feed));
		}
		assertThat(delivered).as("the failed poll's head page is delivered by the next poll, once")
			.containsExactly("b#1", "c#1");
		assertThat(feed.safeOffset()).isEqualTo(feed.headOffset());
	}


	/**
	 * Which rows the feed checks against the events table before delivering them (finding 13, part 3): the sweep's
	 * rows read at least in-flight-wait (3 s here) after their time stamps, and the head's rows aged between the wait
	 * and the wait plus both windows; not the head's fresh rows, nor its rows of old history while it catches up.
	 * A checked row found absent is not delivered and not checked again.
	 */
	@Test
	void rowsReadLaterThanTheInFlightWaitAreCheckedAndThoseOfSealedEventsAreSkipped() {
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(100_000));
		ScriptedIndex index = new ScriptedIndex();
		index.add(10_000, "history", 1, true); // 90 s old: the head catches up on it unchecked
		index.add(95_000, "recent", 1, true); // 5 s old: within 3 s + 10 s, checked
		index.add(99_500, "fresh", 1, true); // 0.5 s old: not checked
		index.add(98_000, "sealed", 1, false); // lands after its number was sealed
		index.add(98_500, "present", 1, false); // lands late; its event is in the journal
		List<String> checked = new ArrayList<>();
		Set<String> absentEvents = Set.of("sealed#1", "history#1", "recent#1", "fresh#1");
		LiveTagFeed feed = new LiveTagFeed(index, TagFilter.tag("t"), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(10)).withPageSize(10), clock,
				Duration.ofSeconds(3), (rows) -> {
					Set<TagOffset> absent = new java.util.HashSet<>();
					for (TaggedEvent<String> row : rows) {
						String key = row.event().persistenceId() + "#" + row.event().sequenceNr();
						checked.add(key);
						if (absentEvents.contains(key) && key.startsWith("sealed")) {
							absent.add(row.offset());
						}
					}
					return CompletableFuture.completedFuture(absent);
				});

		assertThat(poll(feed)).containsExactly("history#1", "recent#1", "fresh#1");
		assertThat(checked).containsExactly("recent#1");

		index.show(98_000, "sealed", 1);
		index.show(98_500, "present", 1);
		List<String> delivered = new ArrayList<>();
		for (long now = 101_000; now <= 120_000; now += 1_000) {
			clock.set(Instant.ofEpochMilli(now));
			delivered.addAll(poll(feed));
		}
		assertThat(delivered).containsExactly("present#1");
		assertThat(checked).containsExactly("recent#1", "sealed#1", "present#1");
		assertThat(feed.lateRowsSkipped()).isEqualTo(1);
	}

	@Test
	void aFailedCheckFailsThePollAndTheNextPollChecksAgain() {
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(100_000));
		ScriptedIndex index = new ScriptedIndex();
		index.add(96_000, "a", 1, true);
		int[] calls = { 0 };
		LiveTagFeed feed = new LiveTagFeed(index, TagFilter.tag("t"), TagOffset.START,
				FeedSettings.DEFAULTS.withPageSize(10), clock, Duration.ofSeconds(3), (rows) -> (calls[0]++ == 0)
						? CompletableFuture.failedFuture(new IllegalStateException("injected seal failure"))
						: CompletableFuture.completedFuture(Set.of()));
		TagOffset before = feed.headOffset();
		assertThatThrownBy(() -> poll(feed)).hasMessageContaining("injected seal failure");
		assertThat(feed.headOffset()).isEqualTo(before);
		assertThat(poll(feed)).containsExactly("a#1");
		assertThat(calls[0]).isEqualTo(2);
	}

}
