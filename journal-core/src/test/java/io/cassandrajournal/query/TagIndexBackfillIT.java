package io.cassandrajournal.query;

import java.util.ArrayList;
import java.util.List;

import com.datastax.oss.driver.api.core.cql.BatchStatement;
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
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tag index backfill on a real node: its writes are back-pressured.
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
		long head = 0;
		for (int i = 0; i < 3; i++) {
			List<EventToAppend> events = new ArrayList<>();
			for (int e = 0; e < 200; e++) {
				events.add(EventToAppend.of(new Deposited(e), tag));
			}
			head = result(unindexed.append(tag + "-big", head, events)).lastSequenceNr();
		}
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

}
