package io.cassandrajournal.journal;

import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagIndexBackfill;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.CountingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How often a start reads the layout record (docs/reliability.md, finding 26; engineer L): each factory given options
 * that leave {@code slice-hash} unset looks the record up ({@code system_schema.tables}, then a serial read of its
 * row), so the order the starter used until 2026-12-02 (create, {@code verifyLayout}, read journal; with a backfill)
 * read it four times. {@code verifyLayout} first, and every factory built from the options it returns, reads it once:
 * the options it returns set the function, so the factories have nothing to adopt. The counts are of requests sent
 * through the session; each test uses its own events table, so its own record.
 */
@CassandraTest
class LayoutStartupReadsIT {

	/** An id whose slice groups (of 16) differ between the two functions. */
	private static final String ID = "account-7";

	private final JacksonEventSerializer serializer = new JacksonEventSerializer();

	private static CassandraJournalOptions options(TestKeyspace keyspace, String events) {
		return CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withEventsTable(events)
			.withMetadataTable(events + "_meta")
			.withTagIndexTable(events + "_tags")
			.withUseTagIndex(true)
			.withTagSliceGroups(16);
	}

	/**
	 * A keyspace another instance recorded with {@code string-hash}, and an instance that leaves the option unset:
	 * the old order reads the record 4 times (3 lookups in {@code system_schema.tables}), verifying first once (no
	 * lookup); both give every part the recorded function.
	 */
	@Test
	void aStartOnARecordedKeyspaceReadsTheRecordOnceWhenItVerifiesFirst(TestKeyspace keyspace) {
		CassandraJournalOptions options = options(keyspace, "reads_rec_events");
		CassandraJournal.verifyLayout(keyspace.session(), options.withSliceHash(SliceHash.STRING_HASH));
		CountingSession counting = new CountingSession(keyspace.session());
		CqlSession session = counting.session();

		CassandraJournal journal = CassandraJournal.create(session, options, this.serializer);
		CassandraJournal.verifyLayout(session, options);
		CassandraReadJournal query = CassandraReadJournal.create(journal, session, options, this.serializer);
		TagIndexBackfill.create(journal, session, options);
		Reads oldOrder = Reads.of(counting.takeQueries(), "reads_rec_events_layout");
		assertUses(SliceHash.STRING_HASH, journal, query);

		CassandraJournalOptions verified = CassandraJournal.verifyLayout(session, options);
		journal = CassandraJournal.create(session, verified, this.serializer);
		query = CassandraReadJournal.create(journal, session, verified, this.serializer);
		TagIndexBackfill.create(journal, session, verified);
		Reads verifiedFirst = Reads.of(counting.takeQueries(), "reads_rec_events_layout");
		assertUses(SliceHash.STRING_HASH, journal, query);

		assertThat(oldOrder).as("create, verifyLayout, read journal, backfill").isEqualTo(new Reads(3, 4));
		assertThat(verifiedFirst).as("verifyLayout first, then each from its answer").isEqualTo(new Reads(0, 1));
	}

	/** The first start on a new keyspace: 3 lookups and 3 reads of the record in the old order, 1 read verifying first. */
	@Test
	void aFirstStartReadsTheRecordOnceWhenItVerifiesFirst(TestKeyspace keyspace) {
		CountingSession counting = new CountingSession(keyspace.session());
		CqlSession session = counting.session();

		CassandraJournalOptions old = options(keyspace, "reads_old_events");
		CassandraJournal journal = CassandraJournal.create(session, old, this.serializer);
		CassandraJournal.verifyLayout(session, old);
		CassandraReadJournal query = CassandraReadJournal.create(journal, session, old, this.serializer);
		TagIndexBackfill.create(journal, session, old);
		Reads oldOrder = Reads.of(counting.takeQueries(), "reads_old_events_layout");
		assertUses(SliceHash.MURMUR3, journal, query);

		CassandraJournalOptions fresh = options(keyspace, "reads_new_events");
		CassandraJournalOptions verified = CassandraJournal.verifyLayout(session, fresh);
		journal = CassandraJournal.create(session, verified, this.serializer);
		query = CassandraReadJournal.create(journal, session, verified, this.serializer);
		TagIndexBackfill.create(journal, session, verified);
		Reads verifiedFirst = Reads.of(counting.takeQueries(), "reads_new_events_layout");
		assertUses(SliceHash.MURMUR3, journal, query);

		assertThat(oldOrder).as("create, verifyLayout, read journal, backfill").isEqualTo(new Reads(3, 3));
		assertThat(verifiedFirst).as("verifyLayout first, then each from its answer").isEqualTo(new Reads(0, 1));
	}

	private static void assertUses(SliceHash hash, CassandraJournal journal, CassandraReadJournal query) {
		assertThat(journal.options().sliceHash()).as("the journal's function").isEqualTo(hash);
		assertThat(query.sliceOf(ID)).as("the read journal's slice of " + ID).isEqualTo(hash.slice(ID));
	}

	/**
	 * @param lookups requests asking {@code system_schema.tables} whether the record's table exists
	 * @param recordReads reads of the record's row
	 */
	record Reads(int lookups, int recordReads) {

		static Reads of(List<String> queries, String layoutTable) {
			int lookups = (int) queries.stream()
				.filter((q) -> q.contains("system_schema.tables") && q.contains(layoutTable))
				.count();
			int recordReads = (int) queries.stream()
				.filter((q) -> q.contains("SELECT settings FROM ") && q.contains("." + layoutTable + " "))
				.count();
			return new Reads(lookups, recordReads);
		}

	}

}
