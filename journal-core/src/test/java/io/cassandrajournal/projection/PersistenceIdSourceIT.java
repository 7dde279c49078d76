package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.CountingSession;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An entity projection's source when sequence numbers are claimed but their events are not visible yet: 11 and
 * 12 claimed, 13 visible. Rows are written with CQL, as the other writer's late batch would land.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PersistenceIdSourceIT {

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name());
	}

	/** Ten events through the journal, then 11..13 claimed by "another writer" whose 13 is visible first. */
	private String tenEventsThenThirteenVisibleAndElevenTwelveClaimed(CassandraJournal journal, long claimedAt) {
		String id = "account-" + System.nanoTime();
		List<EventToAppend> ten = new ArrayList<>();
		for (int i = 1; i <= 10; i++) {
			ten.add(EventToAppend.of(new Deposited(i)));
		}
		result(journal.append(id, 0, ten));
		this.keyspace.session()
			.execute("UPDATE metadata SET max_sequence_nr = 13, updated_at = ? WHERE persistence_id = ?", claimedAt, id);
		writeEvent(id, 13, claimedAt);
		return id;
	}

	private void writeEvent(String id, long sequenceNr, long timestamp) {
		this.keyspace.session()
			.execute("INSERT INTO events (persistence_id, partition_nr, sequence_nr, timestamp, payload, tags) "
					+ "VALUES (?, 0, ?, ?, ?, ?)", id, sequenceNr, timestamp,
					"{\"kind\":\"deposited\",\"amount\":" + sequenceNr + "}", Set.of());
	}

	/** A row as a late batch lands: with the write time its writer gave it (before its claim), not now. */
	private void writeEventWrittenAt(String id, long sequenceNr, long timestamp, long writeTimeMicros) {
		this.keyspace.session()
			.execute("INSERT INTO events (persistence_id, partition_nr, sequence_nr, timestamp, payload, tags) "
					+ "VALUES (?, 0, ?, ?, ?, ?) USING TIMESTAMP ?", id, sequenceNr, timestamp,
					"{\"kind\":\"deposited\",\"amount\":" + sequenceNr + "}", Set.<String>of(), writeTimeMicros);
	}

	private static List<Long> sequenceNrs(ProjectionSource.Batch batch) {
		return batch.events().stream().map(PersistentEvent::sequenceNr).toList();
	}

	@Test
	void eventsAfterClaimedButInvisibleOnesWaitForThemAndComeInOrder() {
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), this.options,
				new JacksonEventSerializer());
		long now = System.currentTimeMillis();
		String id = tenEventsThenThirteenVisibleAndElevenTwelveClaimed(journal, now);
		PersistenceIdSource source = new PersistenceIdSource(journal, id, new TagOffset(0, id, 0), 100);

		CompletableFuture<ProjectionSource.Batch> poll = source.poll().toCompletableFuture();
		// While 11 and 12 are claimed (30 s in-flight wait) and not visible, 13 is not delivered.
		await().alias("the poll holds 13 back while 11 and 12 are in flight")
			.during(Duration.ofMillis(1500))
			.atMost(Duration.ofSeconds(5))
			.until(() -> !poll.isDone());
		writeEvent(id, 11, now);
		writeEvent(id, 12, now);
		ProjectionSource.Batch batch = result(poll);
		assertThat(sequenceNrs(batch)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 11L, 12L, 13L);
		assertThat(batch.caughtUp()).isTrue();
		assertThat(source.offsetAfter(batch.events().size()).sequenceNr()).isEqualTo(13);
	}

	@Test
	void claimedNumbersStillMissingAfterTheInFlightWaitAreSteppedOverAsACrashGap() {
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(),
				this.options.withInFlightWait(Duration.ofSeconds(1)), new JacksonEventSerializer());
		String id = tenEventsThenThirteenVisibleAndElevenTwelveClaimed(journal, System.currentTimeMillis());
		PersistenceIdSource source = new PersistenceIdSource(journal, id, new TagOffset(0, id, 0), 100);

		ProjectionSource.Batch batch = result(source.poll());
		assertThat(sequenceNrs(batch)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L, 13L);
		assertThat(source.offsetAfter(batch.events().size()).sequenceNr()).isEqualTo(13);

		// A gap whose claim is older than the (default, 30 s) wait is stepped over at once, at the end too.
		journal = CassandraJournal.create(this.keyspace.session(), this.options, new JacksonEventSerializer());
		String old = tenEventsThenThirteenVisibleAndElevenTwelveClaimed(journal,
				System.currentTimeMillis() - Duration.ofHours(1).toMillis());
		this.keyspace.session()
			.execute("UPDATE metadata SET max_sequence_nr = 15 WHERE persistence_id = ?", old);
		PersistenceIdSource fromTen = new PersistenceIdSource(journal, old, new TagOffset(0, old, 10), 100);
		ProjectionSource.Batch rest = result(fromTen.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(rest)).containsExactly(13L);
		assertThat(rest.caughtUp()).isTrue();
		// 14 and 15, missing at the end of the stream, are sealed and stepped over too (a sealed gap never shows an
		// event); without a seal they are held (see the next test).
		assertThat(fromTen.offsetAfter(rest.events().size()).sequenceNr()).isEqualTo(15);
	}

	/**
	 * Found by the node-fault run (seed 14, in a full verify): an append cut off by the node's SIGKILL had its logged
	 * batch in the node's batch log; the projection by persistenceId, reading after the restart, saw its number
	 * claimed long ago with no event and stepped over it as a crash gap; then Cassandra replayed the batch log and
	 * the event appeared, behind the cursor: never delivered. At the end of the stream nothing waits behind such a
	 * gap, so the source holds it and reads it again on every poll.
	 */
	@Test
	void claimedNumbersMissingAtTheEndAreHeldSoEventsThatAppearLateAreStillDelivered() {
		// An in-flight wait of zero: nothing is sealed, so an event may still appear in a gap.
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(),
				this.options.withInFlightWait(Duration.ZERO), new JacksonEventSerializer());
		long anHourAgo = System.currentTimeMillis() - Duration.ofHours(1).toMillis();
		String id = tenEventsThenThirteenVisibleAndElevenTwelveClaimed(journal, anHourAgo);
		this.keyspace.session().execute("UPDATE metadata SET max_sequence_nr = 15 WHERE persistence_id = ?", id);
		PersistenceIdSource source = new PersistenceIdSource(journal, id, new TagOffset(0, id, 10), 100);
		ProjectionSource.Batch first = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(first)).as("11 and 12 (old, below a visible event) are stepped over").containsExactly(13L);
		assertThat(first.caughtUp()).as("holding the end is caught up: the runner waits its poll interval").isTrue();

		// The cut-off batch lands late (Cassandra's batch log replay after a restart).
		writeEvent(id, 14, anHourAgo);
		writeEvent(id, 15, anHourAgo);
		ProjectionSource.Batch second = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(second)).containsExactly(14L, 15L);
		assertThat(second.caughtUp()).isTrue();
		assertThat(source.offsetAfter(second.events().size()).sequenceNr()).isEqualTo(15);
	}

	/**
	 * Review of finding 21, items 4-7: with an in-flight wait of zero (seals off), a replay ran a serial read of the
	 * head (a Paxos round on the row writers claim) before stepping over a gap at the end of the stream, on every poll
	 * that raced an append in flight. The source holds such a gap anyway and never moves past it, so the read bought
	 * nothing: it now tells the journal it holds unsealed end gaps, and no serial read is sent. 1..10 visible, 11 and
	 * 12 claimed just now: three polls deliver 1..10 once, hold 11..12 and send no serial read.
	 */
	@Test
	void pollsHoldingAGapAtTheEndWithAWaitOfZeroSendNoSerialRead() {
		CountingSession counting = new CountingSession(this.keyspace.session());
		CassandraJournal journal = CassandraJournal.create(counting.session(),
				this.options.withInFlightWait(Duration.ZERO), new JacksonEventSerializer());
		String id = "account-" + System.nanoTime();
		List<EventToAppend> ten = new ArrayList<>();
		for (int i = 1; i <= 10; i++) {
			ten.add(EventToAppend.of(new Deposited(i)));
		}
		result(journal.append(id, 0, ten));
		this.keyspace.session()
			.execute("UPDATE metadata SET max_sequence_nr = 12, updated_at = ? WHERE persistence_id = ?",
					System.currentTimeMillis(), id);
		PersistenceIdSource source = new PersistenceIdSource(journal, id, new TagOffset(0, id, 0), 100);
		counting.takeSerialReads();

		ProjectionSource.Batch first = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(first)).containsExactly(1L, 2L, 3L, 4L, 5L, 6L, 7L, 8L, 9L, 10L);
		assertThat(source.offsetAfter(first.events().size()).sequenceNr()).as("11..12 held").isEqualTo(10);
		for (int i = 0; i < 2; i++) {
			ProjectionSource.Batch again = result(source.poll(), Duration.ofSeconds(10));
			assertThat(sequenceNrs(again)).isEmpty();
			assertThat(source.offsetAfter(again.events().size()).sequenceNr()).as("11..12 still held").isEqualTo(10);
		}
		assertThat(counting.takeSerialReads()).as("serial reads sent by three polls").isZero();

		writeEvent(id, 11, System.currentTimeMillis());
		writeEvent(id, 12, System.currentTimeMillis());
		ProjectionSource.Batch landed = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(landed)).containsExactly(11L, 12L);
	}


	/**
	 * Finding 11's open case (docs/reliability.md): 11 and 12 were claimed long ago and are missing below the visible
	 * 13, so after the in-flight wait the source steps over them and delivers 13. Then their events appear (a logged
	 * batch that Cassandra replays from its batch log once the node is back, after an outage longer than the
	 * in-flight wait). The source must still deliver them, late and after 13, once each.
	 */
	@Test
	void eventsThatAppearInACrashGapAfterItWasSteppedOverAreDeliveredLate() {
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(),
				this.options.withInFlightWait(Duration.ofSeconds(1)), new JacksonEventSerializer());
		long now = System.currentTimeMillis();
		String id = tenEventsThenThirteenVisibleAndElevenTwelveClaimed(journal, now);
		PersistenceIdSource source = new PersistenceIdSource(journal, id, new TagOffset(0, id, 10), 100);
		ProjectionSource.Batch first = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(first)).as("11 and 12 are stepped over after the in-flight wait").containsExactly(13L);
		assertThat(source.offsetAfter(first.events().size()).sequenceNr()).isEqualTo(13);

		// The cut-off batch lands after the in-flight wait (Cassandra's batch log replay after a restart).
		writeEvent(id, 11, now);
		writeEvent(id, 12, now);
		ProjectionSource.Batch second = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(second)).as("the late events are delivered").containsExactly(11L, 12L);
		assertThat(source.offsetAfter(second.events().size()).sequenceNr()).as("the cursor stays past 13")
			.isEqualTo(13);
		ProjectionSource.Batch third = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(third)).as("delivered once").isEmpty();
	}

	/**
	 * The stepped-over gaps belong to the projection, not to one source: its runner creates a new source from the
	 * stored cursor after a failed batch, and that source must still read them. With the window off, they are not
	 * kept.
	 */
	@Test
	void steppedOverGapsOutliveTheSourceAndAreNotKeptWithTheWindowOff() {
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(),
				this.options.withInFlightWait(Duration.ofSeconds(1)), new JacksonEventSerializer());
		long now = System.currentTimeMillis();
		String id = tenEventsThenThirteenVisibleAndElevenTwelveClaimed(journal, now);
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(now));
		SteppedOverGaps kept = new SteppedOverGaps(id, Duration.ofMinutes(10), clock);
		SteppedOverGaps off = new SteppedOverGaps(id, Duration.ZERO, clock);
		PersistenceIdSource first = new PersistenceIdSource(journal, id, new TagOffset(0, id, 10), 100, kept, clock);
		PersistenceIdSource withoutWindow = new PersistenceIdSource(journal, id, new TagOffset(0, id, 10), 100, off,
				clock);
		assertThat(sequenceNrs(result(first.poll(), Duration.ofSeconds(10)))).containsExactly(13L);
		assertThat(sequenceNrs(result(withoutWindow.poll(), Duration.ofSeconds(10)))).containsExactly(13L);
		TagOffset stored = first.offsetAfter(1);

		writeEvent(id, 11, now);
		writeEvent(id, 12, now);
		PersistenceIdSource next = new PersistenceIdSource(journal, id, stored, 100, kept, clock);
		ProjectionSource.Batch late = result(next.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(late)).containsExactly(11L, 12L);
		assertThat(next.offsetAfter(1).sequenceNr()).as("a late event never moves the cursor").isEqualTo(13);
		clock.advance(SteppedOverGaps.RECHECK_INTERVAL);
		assertThat(sequenceNrs(result(next.poll(), Duration.ofSeconds(10)))).as("12 was not handled: read again")
			.containsExactly(12L);
		assertThat(next.offsetAfter(1).sequenceNr()).isEqualTo(13);
		clock.advance(SteppedOverGaps.RECHECK_INTERVAL);
		assertThat(sequenceNrs(result(next.poll(), Duration.ofSeconds(10)))).isEmpty();
		assertThat(sequenceNrs(result(withoutWindow.poll(), Duration.ofSeconds(10)))).as("window off").isEmpty();
	}

	/**
	 * A sealed gap at the end of the stream (in-flight wait on, the default) is stepped over rather than held: held,
	 * it was read and sealed again on every poll. Like a sealed gap below a visible event it is kept and read again
	 * at most once per {@link SteppedOverGaps#RECHECK_INTERVAL}: a late batch under the seal shows nothing, one
	 * written later than the seal (a writer whose clock ran ahead) is still delivered.
	 */
	@Test
	void aSealedGapIsNotHeldAndIsReadAgainAtMostOncePerInterval() {
		CountingSession counting = new CountingSession(this.keyspace.session());
		CassandraJournal journal = CassandraJournal.create(counting.session(), this.options,
				new JacksonEventSerializer());
		long anHourAgo = System.currentTimeMillis() - Duration.ofHours(1).toMillis();
		String id = tenEventsThenThirteenVisibleAndElevenTwelveClaimed(journal, anHourAgo);
		this.keyspace.session().execute("UPDATE metadata SET max_sequence_nr = 15 WHERE persistence_id = ?", id);
		SettableClock clock = new SettableClock(Instant.now());
		SteppedOverGaps gaps = new SteppedOverGaps(id, Duration.ofHours(2), clock);
		PersistenceIdSource source = new PersistenceIdSource(journal, id, new TagOffset(0, id, 10), 100, gaps, clock);
		ProjectionSource.Batch first = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(first)).containsExactly(13L);
		assertThat(source.offsetAfter(first.events().size()).sequenceNr()).as("past the sealed end").isEqualTo(15);

		// The cut-off batches land late, with their writers' write times (before the claims): under the seals.
		long writtenAt = (anHourAgo - 1) * 1000;
		for (long sequenceNr : new long[] { 11, 12, 14, 15 }) {
			writeEventWrittenAt(id, sequenceNr, anHourAgo, writtenAt);
		}
		counting.takeCount();
		assertThat(sequenceNrs(result(source.poll(), Duration.ofSeconds(10)))).as("shadowed by the seals").isEmpty();
		assertThat(counting.takeCount()).as("the kept gaps in one read (head, partition), then the head of the stream")
			.isEqualTo(3);
		for (int poll = 0; poll < 3; poll++) {
			assertThat(sequenceNrs(result(source.poll(), Duration.ofSeconds(10)))).isEmpty();
			assertThat(counting.takeCount()).as("a caught-up poll within the interval: the head read").isEqualTo(1);
		}
		List<Long> replayed = new ArrayList<>();
		result(journal.replayRaw(id, 1, 15, (event) -> replayed.add(event.sequenceNr())));
		assertThat(replayed).as("the sealed numbers show nothing to anyone").doesNotContain(11L, 12L, 14L, 15L);

		// A writer whose clock ran ahead: its row is newer than the seal, and is still delivered.
		writeEvent(id, 14, anHourAgo);
		clock.advance(SteppedOverGaps.RECHECK_INTERVAL);
		assertThat(sequenceNrs(result(source.poll(), Duration.ofSeconds(10)))).containsExactly(14L);
	}

	/**
	 * Without a seal (in-flight wait zero) stepped-over gaps are read again, but at most once per
	 * {@link SteppedOverGaps#RECHECK_INTERVAL} and with one read for gaps within a page of each other.
	 */
	@Test
	void unsealedGapsCloseTogetherAreReadAgainInOneReadAtMostOncePerInterval() {
		CountingSession counting = new CountingSession(this.keyspace.session());
		CassandraJournal journal = CassandraJournal.create(counting.session(),
				this.options.withInFlightWait(Duration.ZERO), new JacksonEventSerializer());
		long now = System.currentTimeMillis();
		String id = tenEventsThenThirteenVisibleAndElevenTwelveClaimed(journal, now);
		this.keyspace.session().execute("UPDATE metadata SET max_sequence_nr = 17 WHERE persistence_id = ?", id);
		writeEvent(id, 15, now);
		writeEvent(id, 17, now);
		SettableClock clock = new SettableClock(Instant.ofEpochMilli(now));
		SteppedOverGaps gaps = new SteppedOverGaps(id, Duration.ofMinutes(10), clock);
		PersistenceIdSource source = new PersistenceIdSource(journal, id, new TagOffset(0, id, 10), 100, gaps, clock);
		ProjectionSource.Batch first = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(first)).as("11, 12, 14 and 16 stepped over").containsExactly(13L, 15L, 17L);
		assertThat(source.offsetAfter(first.events().size()).sequenceNr()).isEqualTo(17);

		counting.takeCount();
		assertThat(sequenceNrs(result(source.poll(), Duration.ofSeconds(10)))).isEmpty();
		assertThat(counting.takeCount()).as("the first poll after: the three gaps in one read (head and partition), "
				+ "then the head of the stream").isEqualTo(3);
		writeEvent(id, 14, now);
		assertThat(sequenceNrs(result(source.poll(), Duration.ofSeconds(10)))).as("within the interval").isEmpty();
		assertThat(counting.takeCount()).as("within the interval: the head of the stream only").isEqualTo(1);
		clock.advance(SteppedOverGaps.RECHECK_INTERVAL);
		ProjectionSource.Batch late = result(source.poll(), Duration.ofSeconds(10));
		assertThat(sequenceNrs(late)).as("after the interval, the late event").containsExactly(14L);
		assertThat(counting.takeCount()).isEqualTo(3);
	}

}
