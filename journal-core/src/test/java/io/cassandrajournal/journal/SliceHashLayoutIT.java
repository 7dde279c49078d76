package io.cassandrajournal.journal;

import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalLayoutMismatchException;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.Await;
import io.cassandrajournal.testing.SlicedRows;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.SharedCassandra;
import io.cassandrajournal.testsupport.TestKeyspace;
import io.cassandrajournal.testsupport.TestSessions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The slice function is chosen per keyspace: a new keyspace records the configured one (murmur3 when the option is
 * left unset), a keyspace whose layout was recorded before the choice existed keeps {@code String.hashCode}, an
 * instance that leaves the option unset adopts the keyspace's function, and an instance that sets another function
 * than the keyspace's is refused, naming both (its segments would keep other entities than the cursors and sliced
 * tag rows were written for). Each test uses its own events table, so its own record.
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

	/**
	 * The upgrade: a keyspace whose layout was recorded before {@code slice-hash} existed, and an instance that leaves
	 * the option unset (as every instance of that version did). It starts, adopts the keyspace's function
	 * ({@code string-hash}: the record gains it), and its journal, read journal and sliced tag rows use it. Before,
	 * the unset option meant the default murmur3 and the start was refused until the user set the property.
	 */
	@Test
	void aKeyspaceRecordedBeforeTheChoiceIsAdoptedByAnInstanceThatLeavesTheOptionUnset(TestKeyspace keyspace) {
		CassandraJournalOptions options = recordedBeforeTheChoice(keyspace, "hash_old_events");

		CassandraJournal.verifyLayout(keyspace.session(), options);
		assertThat(settings(keyspace, "hash_old_events")).containsEntry("slice-hash", "STRING_HASH");
		// Again, now that the record holds the function.
		CassandraJournal.verifyLayout(keyspace.session(), options);
		assertUsesStringHash(keyspace, options, "hash_old_tags", "adopted");
	}

	/**
	 * A journal created before the layout is verified (the order the starter used) adopts the keyspace's function
	 * too, also while the record still lacks it.
	 */
	@Test
	void aJournalCreatedBeforeVerifyingAdoptsTheRecordedFunction(TestKeyspace keyspace) {
		CassandraJournalOptions options = recordedBeforeTheChoice(keyspace, "hash_early_events");
		assertUsesStringHash(keyspace, options, "hash_early_tags", "early");
	}

	/**
	 * A session without schema metadata (`advanced.metadata.schema.enabled = false`, or a keyspace filtered out of
	 * it) still finds the record: the factories ask the node, not the driver's metadata (with it, the journal took
	 * murmur3 on a string-hash keyspace, silently: an unset value is not compared).
	 */
	@Test
	void aSessionWithoutSchemaMetadataStillAdoptsTheRecordedFunction(TestKeyspace keyspace) {
		CassandraJournalOptions options = recordedBeforeTheChoice(keyspace, "hash_nometa_events");
		try (CqlSession noMetadata = TestSessions.open(SharedCassandra.contactPoints(), SharedCassandra.datacenter(),
				keyspace.name(), TestSessions.testConfig()
					.withBoolean(DefaultDriverOption.METADATA_SCHEMA_ENABLED, false))) {
			CassandraJournal journal = CassandraJournal.create(noMetadata, options, new JacksonEventSerializer());
			assertThat(journal.options().sliceHash()).isEqualTo(SliceHash.STRING_HASH);
			assertThat(CassandraReadJournal.create(journal, noMetadata, options, new JacksonEventSerializer())
				.sliceOf(ID)).isEqualTo(SliceHash.STRING_HASH.slice(ID));
		}
	}

	/** An instance that sets a function other than the keyspace's is refused, as before, naming both. */
	@Test
	void anExplicitMurmur3IsRefusedOnAKeyspaceRecordedBeforeTheChoice(TestKeyspace keyspace) {
		CassandraJournalOptions options = recordedBeforeTheChoice(keyspace, "hash_explicit_events");

		assertThatExceptionOfType(JournalLayoutMismatchException.class)
			.isThrownBy(() -> CassandraJournal.verifyLayout(keyspace.session(),
					options.withSliceHash(SliceHash.MURMUR3)))
			.satisfies((ex) -> {
				assertThat(ex.mismatches()).containsExactly(
						new JournalLayoutMismatchException.Mismatch("slice-hash", "STRING_HASH", "MURMUR3"));
				assertThat(ex.getMessage())
					.contains("slice-hash was recorded as STRING_HASH, this instance has MURMUR3");
			});
		// An instance configured with the keyspace's function starts, also after the refused one.
		CassandraJournal.verifyLayout(keyspace.session(), options.withSliceHash(SliceHash.STRING_HASH));
		assertThat(settings(keyspace, "hash_explicit_events")).containsEntry("slice-hash", "STRING_HASH");
		// And explicit murmur3 is still refused once the record holds string-hash.
		assertThatExceptionOfType(JournalLayoutMismatchException.class).isThrownBy(
				() -> CassandraJournal.verifyLayout(keyspace.session(), options.withSliceHash(SliceHash.MURMUR3)));
	}

	/** A new keyspace and an unset option: murmur3 is recorded and used. */
	@Test
	void aNewKeyspaceWithTheOptionUnsetGetsMurmur3(TestKeyspace keyspace) {
		CassandraJournalOptions options = sliced(keyspace, "hash_fresh_events", "hash_fresh_tags");
		CassandraJournal.verifyLayout(keyspace.session(), options);
		assertThat(settings(keyspace, "hash_fresh_events")).containsEntry("slice-hash", "MURMUR3");
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		CassandraReadJournal query = CassandraReadJournal.create(journal, keyspace.session(), options,
				new JacksonEventSerializer());
		assertThat(query.sliceOf(ID)).isEqualTo(SliceHash.MURMUR3.slice(ID));
	}

	/** An id whose slice groups (of 16) differ between the two functions. */
	private static final String ID = "account-7";

	private static CassandraJournalOptions sliced(TestKeyspace keyspace, String events, String tags) {
		return options(keyspace, events).withMetadataTable(events + "_meta")
			.withTagIndexTable(tags)
			.withUseTagIndex(true)
			.withTagSliceGroups(16);
	}

	/**
	 * @return unset options of a keyspace whose record was written by a version before {@code slice-hash}: every
	 * other setting, not this one (as {@code string-hash} entities and sliced rows were written then)
	 */
	private static CassandraJournalOptions recordedBeforeTheChoice(TestKeyspace keyspace, String events) {
		CassandraJournalOptions options = sliced(keyspace, events, events.replace("_events", "_tags"));
		CassandraJournal.verifyLayout(keyspace.session(), options.withSliceHash(SliceHash.STRING_HASH));
		keyspace.session().execute("DELETE settings['slice-hash'] FROM " + keyspace.name() + "." + events
				+ "_layout WHERE id = 'layout'");
		assertThat(settings(keyspace, events)).doesNotContainKey("slice-hash").containsKey("partition-size");
		return options;
	}

	/** Appends with the unset options and checks where the sliced row went, and the read journal's slices. */
	private static void assertUsesStringHash(TestKeyspace keyspace, CassandraJournalOptions options, String tags,
			String tag) {
		assertThat(groupOf(SliceHash.STRING_HASH, ID)).as("the test id's groups differ")
			.isNotEqualTo(groupOf(SliceHash.MURMUR3, ID));
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, new JacksonEventSerializer());
		Await.result(journal.append(ID, 0, List.of(EventToAppend.of(new AccountEvent.Deposited(1), tag))));
		assertThat(SlicedRows.of(keyspace.session(), keyspace.name(), tags + "_sliced16")
			.groupRows(tag, groupOf(SliceHash.STRING_HASH, ID))).as("the sliced row in the string-hash group").isEqualTo(1);
		CassandraReadJournal query = CassandraReadJournal.create(journal, keyspace.session(), options,
				new JacksonEventSerializer());
		assertThat(query.sliceOf(ID)).isEqualTo(SliceHash.STRING_HASH.slice(ID));
		assertThat(journal.options().sliceHash()).isEqualTo(SliceHash.STRING_HASH);
	}

	private static int groupOf(SliceHash hash, String id) {
		return hash.slice(id) * 16 / 1024;
	}

	private static java.util.Map<String, String> settings(TestKeyspace keyspace, String events) {
		return keyspace.session()
			.execute("SELECT settings FROM " + keyspace.name() + "." + events + "_layout WHERE id = 'layout'")
			.one()
			.getMap("settings", String.class, String.class);
	}

}
