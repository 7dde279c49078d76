package io.cassandrajournal.projection;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.SettableClock;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a by-tag source hands to the offset saves and which wake-ups it answers (issue 17: under a steady load the
 * projection of {@code end-to-end-push-loaded} saved its offset on nearly every poll, and polled on wake-ups for
 * appends it had delivered already). Over the in-memory journal with a settable clock.
 */
class TagFeedSourceTest {

	private final SettableClock clock = new SettableClock(Instant.ofEpochMilli(1_000_000));

	private final InMemoryJournal journal = new InMemoryJournal(new JacksonEventSerializer(), this.clock);

	private TagFeedSource source() {
		return new TagFeedSource(this.journal.readJournal()
			.liveEventsByTag(TagFilter.tag("t"), TagOffset.START, FeedSettings.DEFAULTS
				.withBacktrackWindow(Duration.ofSeconds(10))));
	}

	private AppendResult append(String persistenceId, long expected) {
		return result(this.journal.append(persistenceId, expected, List.of(EventToAppend.of("e", "t"))));
	}

	/**
	 * The sweep's floor ({@code now - backtrack-window}) moves with the clock, so the feed's safe offset moved on every
	 * poll even when nothing was read, and the runner saved it (a compare-and-set) after every empty poll.
	 */
	@Test
	void anEmptyPollThatOnlyMovedTheSweepsFloorLeavesTheOffsetToStoreAsItWas() {
		TagFeedSource source = source();
		append("a", 0);
		assertThat(result(source.poll()).events()).hasSize(1);
		TagOffset afterEvent = source.offsetAfter(1);

		for (int i = 0; i < 5; i++) {
			this.clock.advance(Duration.ofMillis(3));
			assertThat(result(source.poll()).events()).isEmpty();
			assertThat(source.offsetAfter(0)).as("empty poll %d: nothing to store", i).isEqualTo(afterEvent);
		}
	}

	/**
	 * Once the sweep has passed a delivered event, the offset moves past it at the next poll, even an empty one: a
	 * restart then does not deliver it again, as before.
	 */
	@Test
	void anEmptyPollWhoseSweepPassedADeliveredEventMovesTheOffsetToStorePastIt() {
		TagFeedSource source = source();
		append("a", 0);
		assertThat(result(source.poll()).events()).hasSize(1);
		TagOffset afterEvent = source.offsetAfter(1);
		assertThat(afterEvent.timestamp()).isLessThan(1_000_000);

		this.clock.advance(Duration.ofSeconds(11));
		assertThat(result(source.poll()).events()).isEmpty();
		TagOffset moved = source.offsetAfter(0);
		assertThat(moved).as("the sweep is at the delivered event").isEqualTo(new TagOffset(1_000_000, "a", 1));

		this.clock.advance(Duration.ofMillis(3));
		assertThat(result(source.poll()).events()).isEmpty();
		assertThat(source.offsetAfter(0)).isEqualTo(moved);
	}

	/**
	 * An append's own wake-up usually arrives after a poll woken by an earlier append has read its rows already: that
	 * wake-up needs no poll. One whose rows the feed has not delivered still wakes it.
	 */
	@Test
	void aWakeUpForAnAppendTheFeedDeliveredAlreadyNeedsNoPoll() {
		TagFeedSource source = source();
		AppendResult first = append("a", 0);
		assertThat(result(source.poll()).events()).hasSize(1);

		assertThat(source.concerns(first)).as("its event was delivered").isFalse();

		AppendResult second = append("a", 1);
		assertThat(source.concerns(second)).as("not read yet").isTrue();
		assertThat(source.concerns(new AppendResult("b", 1, 1, this.clock.instant(), java.util.Set.of("other"))))
			.as("another tag").isFalse();
	}

}
