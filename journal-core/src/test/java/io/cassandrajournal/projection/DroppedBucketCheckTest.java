package io.cassandrajournal.projection;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.query.EventsPage;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.LivePersistenceIds;
import io.cassandrajournal.query.LiveTagFeed;
import io.cassandrajournal.query.ReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.EventSerializer;
import io.cassandrajournal.testing.SettableClock;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link DroppedBucketCheck} between two reads of the marks (docs/reliability.md, finding 23, R3): a drop that a
 * feed walked across within the recheck interval is reported although the cursor is past the mark by the next read;
 * a cursor already past the mark at the previous read reports nothing. The marks are re-read when the injected clock
 * has moved by {@link DroppedBucketCheck#RECHECK}, so no test waits a minute.
 */
class DroppedBucketCheckTest {

	private static final Instant MARK = Instant.parse("2026-02-01T08:02:00Z");

	private final SettableClock clock = new SettableClock(Instant.parse("2026-02-01T08:05:00Z"));

	private final Map<String, Instant> marks = new ConcurrentHashMap<>();

	private final WalkingSource source = new WalkingSource();

	private static TagOffset at(String instant, long sequenceNr) {
		return new TagOffset(Instant.parse(instant).toEpochMilli(), "acct-1", sequenceNr);
	}

	@Test
	void aFeedThatWalkedAcrossADropBetweenTwoReadsOfTheMarksReportsIt() {
		DroppedBucketCheck check = new DroppedBucketCheck(this.source, TagFilter.tag("orders"),
				at("2026-02-01T08:00:30Z", 1), new MarksOnly(this.marks, new AtomicBoolean()), this.clock,
				new DroppedBucketWalk());
		result(check.poll());
		assertThat(check.deleted()).as("no mark yet").isNull();

		// The cleanup drops the buckets up to 08:02, then the feed's walk (which no longer lists them) moves on.
		this.marks.put("orders", MARK);
		this.source.next = at("2026-02-01T08:03:00Z", 5);
		check.offsetAfter(1);
		this.clock.advance(DroppedBucketCheck.RECHECK);
		result(check.poll());

		assertThat(check.deleted()).isEqualTo(ProjectionStatus.DeletedEvents.byTag("orders", MARK));
	}

	@Test
	void aCursorPastTheMarkAtThePreviousReadReportsNothing() {
		DroppedBucketCheck check = new DroppedBucketCheck(this.source, TagFilter.tag("orders"),
				at("2026-02-01T08:02:30Z", 1), new MarksOnly(this.marks, new AtomicBoolean()), this.clock,
				new DroppedBucketWalk());
		result(check.poll());
		this.marks.put("orders", MARK);
		this.source.next = at("2026-02-01T08:03:00Z", 5);
		check.offsetAfter(1);
		this.clock.advance(DroppedBucketCheck.RECHECK);
		result(check.poll());
		this.clock.advance(DroppedBucketCheck.RECHECK);
		result(check.poll());

		assertThat(check.deleted()).isNull();
	}

	/**
	 * The runner creates a new source (and check) from the stored offset after a failed poll; here the poll failed
	 * because the mark read did. The walk since the last successful read is the projection's, not the check's: the
	 * new check, which starts past the mark, still reports the drop the old one walked across (finding 23, Review,
	 * item 3).
	 */
	@Test
	void aNewCheckAfterAFailedReadOfTheMarksStillReportsADropTheOldOneWalkedAcross() {
		DroppedBucketWalk walk = new DroppedBucketWalk();
		MarksOnly query = new MarksOnly(this.marks, new AtomicBoolean());
		DroppedBucketCheck first = new DroppedBucketCheck(this.source, TagFilter.tag("orders"),
				at("2026-02-01T08:00:30Z", 1), query, this.clock, walk);
		result(first.poll());
		this.marks.put("orders", MARK);
		this.source.next = at("2026-02-01T08:03:00Z", 5);
		first.offsetAfter(1);
		this.clock.advance(DroppedBucketCheck.RECHECK);
		query.failNext().set(true);
		assertThatThrownBy(() -> result(first.poll())).as("the mark read failed, so did the poll");

		// The stored offset is past the mark: the new check starts there, with the projection's memory.
		DroppedBucketCheck second = new DroppedBucketCheck(this.source, TagFilter.tag("orders"),
				at("2026-02-01T08:03:00Z", 5), query, this.clock, walk);
		result(second.poll());
		assertThat(second.deleted()).isEqualTo(ProjectionStatus.DeletedEvents.byTag("orders", MARK));
	}

	/**
	 * A new check made after a failure elsewhere (a dead letter, an offset store) before the next read of the marks
	 * is due: the walk of the previous check is compared at that read, not forgotten.
	 */
	@Test
	void aNewCheckBeforeTheNextReadIsDueComparesTheWholeWalkAtThatRead() {
		DroppedBucketWalk walk = new DroppedBucketWalk();
		MarksOnly query = new MarksOnly(this.marks, new AtomicBoolean());
		DroppedBucketCheck first = new DroppedBucketCheck(this.source, TagFilter.tag("orders"),
				at("2026-02-01T08:00:30Z", 1), query, this.clock, walk);
		result(first.poll());
		this.marks.put("orders", MARK);
		this.source.next = at("2026-02-01T08:03:00Z", 5);
		first.offsetAfter(1);

		DroppedBucketCheck second = new DroppedBucketCheck(this.source, TagFilter.tag("orders"),
				at("2026-02-01T08:03:00Z", 5), query, this.clock, walk);
		result(second.poll());
		this.clock.advance(DroppedBucketCheck.RECHECK);
		result(second.poll());
		assertThat(second.deleted()).isEqualTo(ProjectionStatus.DeletedEvents.byTag("orders", MARK));
	}

	/** A source whose cursor moves where the test says. */
	private static final class WalkingSource implements ProjectionSource {

		TagOffset next = TagOffset.START;

		@Override
		public CompletionStage<Batch> poll() {
			return CompletableFuture.completedFuture(new Batch(List.of(), true));
		}

		@Override
		public TagOffset offsetAfter(int handledInBatch) {
			return this.next;
		}

		@Override
		public CompletionStage<Long> eventsAfter(TagOffset offset, int limit) {
			return CompletableFuture.completedFuture(0L);
		}

		@Override
		public boolean concerns(AppendResult result) {
			return false;
		}

	}

	/** A read journal that only knows drop marks. */
	private record MarksOnly(Map<String, Instant> marks, AtomicBoolean failNext) implements ReadJournal {

		@Override
		public CompletionStage<Optional<Instant>> tagDroppedBefore(String tag) {
			if (this.failNext.getAndSet(false)) {
				return CompletableFuture.failedFuture(new IllegalStateException("injected: the mark read timed out"));
			}
			return CompletableFuture.completedFuture(Optional.ofNullable(this.marks.get(tag)));
		}

		@Override
		public <E> CompletionStage<EventsPage<E>> currentEventsByTag(TagFilter filter, TagOffset after, int limit,
				Class<E> type) {
			throw new UnsupportedOperationException();
		}

		@Override
		public LiveTagFeed liveEventsByTag(TagFilter filter, TagOffset start, FeedSettings settings) {
			throw new UnsupportedOperationException();
		}

		@Override
		public LivePersistenceIds livePersistenceIds() {
			throw new UnsupportedOperationException();
		}

		@Override
		public Journal journal() {
			throw new UnsupportedOperationException();
		}

		@Override
		public EventSerializer serializer() {
			throw new UnsupportedOperationException();
		}

	}

}
