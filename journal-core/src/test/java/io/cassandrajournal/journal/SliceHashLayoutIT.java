package io.cassandrajournal.journal;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalLayoutMismatchException;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The slice function is chosen per keyspace: a new keyspace records the configured one (murmur3 by default), a
 * keyspace whose layout was recorded before the choice existed keeps {@code String.hashCode}, and an instance
 * with another function than the keyspace's is refused, naming both (its segments would keep other entities than
 * the cursors and sliced tag rows were written for). Each test uses its own events table, so its own record.
 */
@CassandraTest
class SliceHashLayoutIT {

	private static CassandraJournalOptions options(TestKeyspace keyspace, String events) {
		return CassandraJournalOptions.create().withKeyspace(keyspace.name()).withEventsTable(events);
	}

	@Test
	void aNewKeyspaceRecordsMurmur3AndRefusesAnInstanceWithStringHash(TestKeyspace keyspace) {
		CassandraJournalOptions options = options(keyspace, "hash_new_events");
		CassandraJournal.verifyLayout(keyspace.session(), options);
		assertThat(settings(keyspace, "hash_new_events")).containsEntry("slice-hash", "MURMUR3");
		CassandraJournal.verifyLayout(keyspace.session(), options.withSliceHash(SliceHash.MURMUR3));

		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(),
					options.withSliceHash(SliceHash.STRING_HASH)))
			.satisfies((ex) -> assertThat(ex.mismatches()).containsExactly(
					new JournalLayoutMismatchException.Mismatch("slice-hash", "MURMUR3", "STRING_HASH")));
	}

	@Test
	void aKeyspaceRecordedBeforeTheChoiceKeepsStringHashAndRefusesTheNewDefault(TestKeyspace keyspace) {
		CassandraJournalOptions options = options(keyspace, "hash_old_events");
		CassandraJournal.verifyLayout(keyspace.session(), options.withSliceHash(SliceHash.STRING_HASH));
		// The record as a version before slice-hash wrote it: every other setting, not this one.
		keyspace.session().execute("DELETE settings['slice-hash'] FROM " + keyspace.name()
				+ ".hash_old_events_layout WHERE id = 'layout'");
		assertThat(settings(keyspace, "hash_old_events")).doesNotContainKey("slice-hash").containsKey("partition-size");

		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(), options))
			.satisfies((ex) -> {
				assertThat(ex.mismatches()).containsExactly(
						new JournalLayoutMismatchException.Mismatch("slice-hash", "STRING_HASH", "MURMUR3"));
				assertThat(ex.getMessage())
					.contains("slice-hash was recorded as STRING_HASH, this instance has MURMUR3");
			});
		// An instance configured with the keyspace's function starts, also after the refused one.
		CassandraJournal.verifyLayout(keyspace.session(), options.withSliceHash(SliceHash.STRING_HASH));
		assertThat(settings(keyspace, "hash_old_events").getOrDefault("slice-hash", "STRING_HASH"))
			.isEqualTo("STRING_HASH");
	}

	private static java.util.Map<String, String> settings(TestKeyspace keyspace, String events) {
		return keyspace.session()
			.execute("SELECT settings FROM " + keyspace.name() + "." + events + "_layout WHERE id = 'layout'")
			.one()
			.getMap("settings", String.class, String.class);
	}

}
