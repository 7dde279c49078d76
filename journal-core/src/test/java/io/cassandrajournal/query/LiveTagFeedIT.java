package io.cassandrajournal.query;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The live tag feed's failure behaviour on a real node: a poll is all or nothing.
 */
@CassandraTest
class LiveTagFeedIT {

	private static List<String> keys(List<TaggedEvent<String>> events) {
		return events.stream().map((e) -> e.event().persistenceId() + "#" + e.event().sequenceNr()).toList();
	}

	@Test
	void aSweepReadTimeoutFailsThePollAndTheNextPollDeliversTheHeadPage(TestKeyspace keyspace) {
		SettableClock clock = new SettableClock(Instant.parse("2026-03-01T10:15:00Z"));
		CassandraJournalOptions options = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withUseTagIndex(true)
			.withClock(clock);
		FaultInjectingSession faults = new FaultInjectingSession(keyspace.session());
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		CassandraReadJournal query = CassandraReadJournal.create(journal, faults.session(), options,
				new JacksonEventSerializer());
		String tag = "sweepfail-" + System.nanoTime();
		result(journal.append(tag + "-a", 0, List.of(EventToAppend.of(new Deposited(1), tag))));
		LiveTagFeed feed = query.liveEventsByTag(TagFilter.tag(tag), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(10)));
		assertThat(keys(result(feed.poll()))).containsExactly(tag + "-a#1");

		clock.advance(Duration.ofMillis(500));
		result(journal.append(tag + "-b", 0, List.of(EventToAppend.of(new Deposited(2), tag))));
		result(journal.append(tag + "-c", 0, List.of(EventToAppend.of(new Deposited(3), tag))));
		clock.advance(Duration.ofMillis(500));
		// The poll's first read of the index (the head) goes through, its second (the sweep) times out.
		faults.failOnce("FROM " + keyspace.name() + "." + options.tagIndexTable(), 1);
		assertThatThrownBy(() -> feed.poll().toCompletableFuture().join()).hasMessageContaining("injected failure");
		assertThat(faults.injected()).isEqualTo(1);

		List<String> delivered = new ArrayList<>(keys(result(feed.poll())));
		clock.advance(Duration.ofSeconds(30));
		for (int i = 0; i < 3; i++) {
			delivered.addAll(keys(result(feed.poll())));
		}
		assertThat(delivered).containsExactly(tag + "-b#1", tag + "-c#1");
		assertThat(feed.safeOffset()).isEqualTo(feed.headOffset());
	}

}
