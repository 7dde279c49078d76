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

import io.cassandrajournal.internal.TagEventReader;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.testing.SettableClock;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

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

	private static List<String> poll(LiveTagFeed feed) {
		return result(feed.poll()).stream().map((e) -> e.event().persistenceId() + "#" + e.event().sequenceNr()).toList();
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

}
