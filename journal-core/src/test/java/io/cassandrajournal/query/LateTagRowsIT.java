package io.cassandrajournal.query;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.JournalWriteUncertainException;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.LateBatches;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.JournalFixture.journal;
import static io.cassandrajournal.testing.JournalFixture.newId;
import static io.cassandrajournal.testing.LateBatches.deposit;
import static io.cassandrajournal.testing.LateBatches.outcome;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Finding 13's part 3 on a real node (docs/reliability.md): an uncertain append whose logged batch lands later than
 * {@code in-flight-wait} after its claim, after a replay sealed its number. Its events row is shadowed by the seal,
 * but its tag rows are not: a live tag feed whose sweep meets them must not deliver them, and once the feed has met
 * them a tag query must not return them either. A late tag row whose event is in the journal is delivered as before.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LateTagRowsIT {

	private TestKeyspace keyspace;

	@BeforeAll
	void keyspace(TestKeyspace keyspace) {
		this.keyspace = keyspace;
	}

	private CqlSession session() {
		return this.keyspace.session();
	}

	private CassandraJournalOptions options(TagBucketing bucketing) {
		// A 1 s in-flight wait: a batch held 4 s lands well after it, and well inside a 7 s backtrack window.
		return CassandraJournalOptions.create()
			.withKeyspace(this.keyspace.name())
			.withUseTagIndex(true)
			.withTagBucketing(bucketing)
			.withInFlightWait(Duration.ofSeconds(1));
	}

	/** Writer A on a fault session, writer B, a read journal on B's journal, a new tag and a new entity. */
	private record Writers(FaultInjectingSession faults, CassandraJournal a, CassandraJournal b,
			CassandraReadJournal query, String tag, String id) {
	}

	private Writers writers(TagBucketing bucketing) {
		CassandraJournalOptions options = options(bucketing);
		FaultInjectingSession faults = new FaultInjectingSession(session());
		CassandraJournal b = journal(session(), options);
		return new Writers(faults, journal(faults.session(), options), b,
				CassandraReadJournal.create(b, session(), options, new JacksonEventSerializer()),
				"late-tag-" + UUID.randomUUID(), newId());
	}

	private static List<String> keys(List<TaggedEvent<String>> events) {
		return events.stream().map((e) -> e.event().persistenceId() + "#" + e.event().sequenceNr()).toList();
	}

	private static List<Long> replayed(Journal journal, String id) {
		return LateBatches.replayed(journal, id).sequenceNrs();
	}

	/**
	 * Polls the feed until its sweep has passed {@code until} (bounded: the sweep trails real time by the backtrack
	 * window, 7 s here; 30 s is ample on a loaded machine) and returns everything it delivered.
	 */
	private static List<String> pollPast(LiveTagFeed feed, TagOffset until, List<String> delivered) {
		await().alias("the feed's sweep passes " + until)
			.atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> {
				delivered.addAll(keys(result(feed.poll())));
				return feed.safeOffset().compareTo(until) >= 0;
			});
		return delivered;
	}

	/**
	 * The regression test: 1 is appended; writer A claims 2 and its batch is held for 4 s (the in-flight wait is
	 * 1 s); writer B appends 3; a replay steps over 2 and seals it; then A's batch lands. Its events row stays
	 * shadowed (the replay shows [1, 3]), and a feed that has been polling throughout must deliver only 1 and 3.
	 */
	@Test
	void aTagFeedDoesNotDeliverTheTagRowsOfASealedEvent() {
		sealedEventIsNotDelivered(TagBucketing.NONE);
	}

	@Test
	void aTagFeedDoesNotDeliverTheTagRowsOfASealedEventInTheBucketedLayout() {
		sealedEventIsNotDelivered(TagBucketing.MINUTE);
	}

	private void sealedEventIsNotDelivered(TagBucketing bucketing) {
		Writers w = writers(bucketing);
		LiveTagFeed feed = w.query().liveEventsByTag(TagFilter.tag(w.tag()), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(7)));
		List<String> delivered = new ArrayList<>(keys(result(feed.poll())));

		// Writer A cannot settle its own append (as if it had died): its seal fails, so only the feed can keep the
		// late tag rows out.
		w.faults().failMatching(FaultInjectingSession.cqlContains(" USING TIMESTAMP "));
		LateBatches.LateAppend held = LateBatches.heldBetween(w.a(), w.faults(), w.b(), w.id(), Duration.ofSeconds(4),
				w.tag());
		CompletionStage<AppendResult> late = held.late();
		AppendResult third = held.third();
		delivered.addAll(keys(result(feed.poll())));
		assertThat(replayed(w.b(), w.id())).as("2 stepped over and sealed").containsExactly(1L, 3L);
		assertThat(outcome(late)).as("A's batch landed after the in-flight wait")
			.isInstanceOf(JournalWriteUncertainException.class);
		assertThat(replayed(w.b(), w.id())).as("the seal shadows A's events row").containsExactly(1L, 3L);

		TagOffset offsetOf3 = new TagOffset(third.timestamp().toEpochMilli(), w.id(), 3);
		assertThat(pollPast(feed, offsetOf3, delivered)).as("the feed delivers what the journal holds")
			.containsExactly(w.id() + "#1", w.id() + "#3");
		List<String> current = keys(
				result(w.query().currentEventsByTag(TagFilter.tag(w.tag()), TagOffset.START, 100, String.class))
					.events());
		assertThat(current).as("a tag query after the feed met the late rows")
			.containsExactly(w.id() + "#1", w.id() + "#3");
		assertThat(feed.lateRowsSkipped()).isEqualTo(1);
	}

	/**
	 * The other side: a tag row first read later than the in-flight wait whose event is in the journal (the batch
	 * landed late, but no reader sealed its number) is delivered. Passes on the code before the fix too: it guards
	 * the check against dropping events.
	 */
	@Test
	void aLateTagRowWhoseEventIsInTheJournalIsDelivered() {
		Writers w = writers(TagBucketing.NONE);
		LiveTagFeed feed = w.query().liveEventsByTag(TagFilter.tag(w.tag()), TagOffset.START,
				FeedSettings.DEFAULTS.withBacktrackWindow(Duration.ofSeconds(7)));
		List<String> delivered = new ArrayList<>(keys(result(feed.poll())));

		result(w.b().append(w.id(), 0, deposit(1, w.tag())));
		w.faults().delayBatches(Duration.ofMillis(2500));
		CompletionStage<AppendResult> late = w.a().append(w.id(), 1, deposit(2, w.tag()));
		delivered.addAll(keys(result(feed.poll())));
		assertThat(outcome(late)).isInstanceOf(JournalWriteUncertainException.class);
		AppendResult third = result(w.b().append(w.id(), 2, deposit(3, w.tag())));
		assertThat(replayed(w.b(), w.id())).as("nobody sealed 2: it is in the journal").containsExactly(1L, 2L, 3L);

		TagOffset offsetOf3 = new TagOffset(third.timestamp().toEpochMilli(), w.id(), 3);
		assertThat(pollPast(feed, offsetOf3, delivered)).containsExactlyInAnyOrder(w.id() + "#1", w.id() + "#2",
				w.id() + "#3");
		assertThat(feed.lateRowsSkipped()).isZero();
	}


	/**
	 * The writer's side (part 3): writer A, alive, whose append ended uncertain and whose events are absent
	 * in-flight-wait after its claim (a replay sealed its number), seals it and deletes its tag rows, so the batch
	 * landing later shows in no tag query, with no feed running.
	 */
	@Test
	void aWriterSettlesItsUncertainAppendSoThatItsLateTagRowsNeverShow() {
		Writers w = writers(TagBucketing.NONE);
		CompletionStage<AppendResult> late = LateBatches.heldBetween(w.a(), w.faults(), w.b(), w.id(), Duration.ofSeconds(4),
				w.tag()).late();
		assertThat(replayed(w.b(), w.id())).as("2 stepped over and sealed").containsExactly(1L, 3L);
		assertThat(outcome(late)).isInstanceOf(JournalWriteUncertainException.class);

		// A's batch has landed (its outcome came after it). A settles 2 once in-flight-wait has passed since its
		// claim: bounded by the wait, A's retries and a loaded machine, 20 s.
		await().alias("tag query without A's late row")
			.atMost(Duration.ofSeconds(20))
			.pollInterval(Duration.ofMillis(200))
			.until(() -> keys(result(
					w.query().currentEventsByTag(TagFilter.tag(w.tag()), TagOffset.START, 100, String.class)).events()),
					(current) -> current.equals(List.of(w.id() + "#1", w.id() + "#3")));
		assertThat(replayed(w.b(), w.id())).containsExactly(1L, 3L);
	}

	/**
	 * The writer's settle never removes an append that is there: A's batch held past the wait but nobody sealed its
	 * number, so its event is in the journal when A looks; A's event and tag row stay.
	 */
	@Test
	void aWriterLeavesItsUncertainAppendAloneWhenItsEventsAreThere() {
		Writers w = writers(TagBucketing.NONE);
		result(w.b().append(w.id(), 0, deposit(1, w.tag())));
		// The logged batch applies, then its answer is a timeout: uncertain, well within the wait.
		w.faults().applyThenTimeOut((s) -> s instanceof com.datastax.oss.driver.api.core.cql.BatchStatement, 100);
		assertThat(outcome(w.a().append(w.id(), 1, deposit(2, w.tag()))))
			.isInstanceOf(JournalWriteUncertainException.class);
		w.faults().heal();
		// Past the wait and A's look (1 s + margin): nothing changed. Awaitility holds the condition for 3 s.
		await().alias("A's event and tag row stay")
			.during(Duration.ofSeconds(3))
			.atMost(Duration.ofSeconds(10))
			.until(() -> replayed(w.b(), w.id()).equals(List.of(1L, 2L)) && keys(
					result(w.query().currentEventsByTag(TagFilter.tag(w.tag()), TagOffset.START, 100, String.class))
						.events())
				.equals(List.of(w.id() + "#1", w.id() + "#2")));
	}

}
