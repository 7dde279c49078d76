package io.cassandrajournal.retention;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * {@link CassandraJournalOptions#withTagIndexTtl} on a real node: tag rows carry the TTL in both layouts, expire
 * from tag queries, and the events stay.
 */
@CassandraTest
class TagIndexTtlIT {

	private static List<EventToAppend> deposits(int count, String tag) {
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			events.add(EventToAppend.of(new Deposited(1), tag));
		}
		return events;
	}

	private static String table(CassandraJournalOptions options) {
		return (options.tagBucketing() == TagBucketing.NONE) ? options.tagIndexTable() : options.tagIndexDataTable();
	}

	@ParameterizedTest
	@EnumSource(value = TagBucketing.class, names = { "NONE", "HOUR" })
	void tagRowsCarryTheTtlAndExpireWhileTheEventsStay(TagBucketing bucketing, TestKeyspace keyspace) {
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name())
			.withUseTagIndex(true).withTagBucketing(bucketing).withTagIndexTtl(Duration.ofSeconds(3));
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		CassandraReadJournal query = CassandraReadJournal.create(journal, keyspace.session(), options,
				new JacksonEventSerializer());
		String tag = "ttl-" + System.nanoTime();
		String id = "ttl-" + UUID.randomUUID();
		result(journal.append(id, 0, deposits(3, tag)));

		List<Row> rows = keyspace.session().execute("SELECT TTL(payload) FROM " + table(options) + " WHERE tag = ?"
				+ ((bucketing == TagBucketing.NONE) ? "" : " ALLOW FILTERING"), tag).all();
		assertThat(rows).hasSize(3).allSatisfy((row) -> assertThat(row.getInt(0)).isBetween(1, 3));
		await().alias("the tag rows expired").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(500))
			.until(() -> {
				List<Long> seen = new ArrayList<>();
				result(query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START, String.class,
						(e) -> seen.add(e.event().sequenceNr())));
				return seen.isEmpty();
			});
		List<Long> replayed = new ArrayList<>();
		result(journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> replayed.add(e.sequenceNr())));
		assertThat(replayed).containsExactly(1L, 2L, 3L);
	}

	@Test
	void withoutTheOptionTagRowsLiveForEver(TestKeyspace keyspace) {
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name())
			.withUseTagIndex(true);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		String tag = "no-ttl-" + System.nanoTime();
		result(journal.append("no-ttl-" + UUID.randomUUID(), 0, deposits(2, tag)));
		assertThat(keyspace.session().execute("SELECT TTL(payload) FROM events_by_tag WHERE tag = ?", tag).all())
			.hasSize(2)
			.allSatisfy((row) -> assertThat(row.isNull(0)).isTrue());
		assertThatIllegalArgumentException().isThrownBy(() -> options.withTagIndexTtl(Duration.ofMillis(1500)))
			.withMessageContaining("tagIndexTtl");
		assertThatIllegalArgumentException().isThrownBy(() -> options.withTagIndexTtl(Duration.ofDays(365 * 21)))
			.withMessageContaining("tagIndexTtl");
	}

}
