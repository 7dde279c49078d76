package io.cassandrajournal.query;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.InFlightSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.awaitility.Awaitility.await;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tag index backfill on a real node: its writes are back-pressured, and a deleteTo racing it is not undone.
 */
@CassandraTest
class TagIndexBackfillIT {

	@Test
	void backfillKeepsAtMostAWindowOfWritesInFlight(TestKeyspace keyspace) {
		CassandraJournalOptions indexed = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withUseTagIndex(true);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), indexed, new JacksonEventSerializer());
		CassandraJournal unindexed = CassandraJournal.create(keyspace.session(), indexed.withUseTagIndex(false),
				new JacksonEventSerializer());
		String tag = "window-" + System.nanoTime();
		appendSixHundred(unindexed, tag + "-big", tag);
		result(unindexed.append(tag + "-small", 0, List.of(EventToAppend.of(new Deposited(1), tag))));

		// Tag rows are written as unlogged batches (one per event and tag partition here).
		InFlightSession writes = new InFlightSession(keyspace.session(), (statement) -> statement instanceof BatchStatement);
		TagIndexBackfill backfill = TagIndexBackfill.create(journal, writes.session(), indexed);
		assertThat(result(backfill.run())).isGreaterThanOrEqualTo(601);

		assertThat(writes.sent()).isGreaterThanOrEqualTo(601);
		assertThat(writes.maxInFlight()).as("tag writes in flight at once (601 to write)")
			.isBetween(1, TagIndexBackfill.MAX_IN_FLIGHT_WRITES);
		CassandraReadJournal query = CassandraReadJournal.create(journal, keyspace.session(), indexed,
				new JacksonEventSerializer());
		List<String> indexedEvents = new ArrayList<>();
		result(query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START, AccountEvent.class,
				(e) -> indexedEvents.add(e.event().persistenceId() + "#" + e.event().sequenceNr())));
		assertThat(indexedEvents).hasSize(601).doesNotHaveDuplicates();
	}

	/**
	 * Each chunk of events is read once, with the write times its tag rows carry (finding 12), and the head once
	 * per persistenceId: the events of a chunk are not read a second time for their write times, and the head is
	 * not read again per chunk.
	 */
	@Test
	void eachChunkOfEventsIsReadOnceWithItsWriteTimes(TestKeyspace keyspace) {
		CassandraJournalOptions indexed = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withUseTagIndex(true)
			.withPartitionSize(400);
		CassandraJournal unindexed = CassandraJournal.create(keyspace.session(), indexed.withUseTagIndex(false),
				new JacksonEventSerializer());
		String tag = "once-" + System.nanoTime();
		appendSixHundred(unindexed, tag + "-big", tag);
		String events = keyspace.name() + "." + indexed.eventsTable() + " ";
		String metadata = keyspace.name() + "." + indexed.metadataTable() + " ";
		Map<String, AtomicInteger> reads = new ConcurrentHashMap<>();
		CqlSession counting = (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(),
				new Class<?>[] { CqlSession.class }, (proxy, method, args) -> {
					if (method.getName().startsWith("execute") && args != null && args.length == 1
							&& args[0] instanceof BoundStatement bound) {
						String cql = bound.getPreparedStatement().getQuery();
						if (cql.startsWith("SELECT") && cql.contains(" FROM " + events)) {
							reads.computeIfAbsent("events", (k) -> new AtomicInteger()).incrementAndGet();
						}
						if (cql.startsWith("SELECT") && cql.contains(" FROM " + metadata)) {
							reads.computeIfAbsent("head", (k) -> new AtomicInteger()).incrementAndGet();
						}
					}
					try {
						return method.invoke(keyspace.session(), args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
		CassandraJournal journal = CassandraJournal.create(counting, indexed, new JacksonEventSerializer());
		TagIndexBackfill backfill = TagIndexBackfill.create(journal, counting, indexed);
		assertThat(result(backfill.run())).isEqualTo(600);

		// Chunks of 500 over partitions of 400: 1..500 spans partitions 0 and 1, 501..600 partition 1.
		assertThat(reads.get("events")).as("reads of the events table: one per chunk and partition it spans")
			.hasValue(3);
		assertThat(reads.get("head")).as("head reads: one for the one persistenceId").hasValue(1);
		CassandraReadJournal query = CassandraReadJournal.create(journal, keyspace.session(), indexed,
				new JacksonEventSerializer());
		List<Long> indexedEvents = new ArrayList<>();
		result(query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START, AccountEvent.class,
				(e) -> indexedEvents.add(e.event().sequenceNr())));
		assertThat(indexedEvents).hasSize(600).doesNotHaveDuplicates();
	}

	/**
	 * The backfill reads an event, a deleteTo then deletes it and its tag rows, then the backfill's tag row
	 * write arrives: it must not bring the deleted event back into the tag index.
	 */
	@Test
	void aTagRowWrittenAfterADeleteToRemovedItsEventStaysDeleted(TestKeyspace keyspace) {
		CassandraJournalOptions indexed = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withUseTagIndex(true);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), indexed, new JacksonEventSerializer());
		CassandraJournal unindexed = CassandraJournal.create(keyspace.session(), indexed.withUseTagIndex(false),
				new JacksonEventSerializer());
		String tag = "raced-" + System.nanoTime();
		String id = tag + "-entity";
		result(unindexed.append(id, 0, List.of(EventToAppend.of(new Deposited(1), tag),
				EventToAppend.of(new Deposited(2), tag), EventToAppend.of(new Deposited(3), tag))));

		// The backfill's tag row writes (unlogged batches) are held until the deleteTo has completed.
		HeldBatches held = new HeldBatches(keyspace.session());
		TagIndexBackfill backfill = TagIndexBackfill.create(journal, held.session(), indexed);
		CompletableFuture<Long> run = backfill.run().toCompletableFuture();
		await().alias("the backfill has read the events and is writing their tag rows")
			.atMost(Duration.ofSeconds(10))
			.until(() -> held.held() > 0 || run.isDone());
		result(journal.deleteTo(id, 3));
		held.release();
		result(run);

		List<Long> replayed = new ArrayList<>();
		result(journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> replayed.add(e.sequenceNr())));
		assertThat(replayed).as("replayed after the deleteTo").isEmpty();
		CassandraReadJournal query = CassandraReadJournal.create(journal, keyspace.session(), indexed,
				new JacksonEventSerializer());
		List<Long> indexedEvents = new ArrayList<>();
		result(query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START, AccountEvent.class,
				(e) -> indexedEvents.add(e.event().sequenceNr())));
		assertThat(indexedEvents).as("tag rows of deleted events").isEmpty();
	}

	/** Appends 600 tagged events to one entity, 200 per append, without the tag index. */
	private static void appendSixHundred(CassandraJournal unindexed, String persistenceId, String tag) {
		long head = 0;
		for (int i = 0; i < 3; i++) {
			List<EventToAppend> events = new ArrayList<>();
			for (int e = 0; e < 200; e++) {
				events.add(EventToAppend.of(new Deposited(e), tag));
			}
			head = result(unindexed.append(persistenceId, head, events)).lastSequenceNr();
		}
	}

	/** A session whose batches wait for {@link #release()} before they are sent. */
	private static final class HeldBatches {

		private final CqlSession delegate;

		private final CompletableFuture<Void> released = new CompletableFuture<>();

		private final AtomicInteger held = new AtomicInteger();

		HeldBatches(CqlSession delegate) {
			this.delegate = delegate;
		}

		CqlSession session() {
			return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(),
					new Class<?>[] { CqlSession.class }, (proxy, method, args) -> {
						if (method.getName().equals("executeAsync") && args != null && args.length == 1
								&& args[0] instanceof BatchStatement batch) {
							this.held.incrementAndGet();
							return this.released.thenCompose((ignored) -> this.delegate.executeAsync((Statement<?>) batch));
						}
						try {
							return method.invoke(this.delegate, args);
						}
						catch (InvocationTargetException ex) {
							throw ex.getCause();
						}
					});
		}

		int held() {
			return this.held.get();
		}

		void release() {
			this.released.complete(null);
		}

	}

}
