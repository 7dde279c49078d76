package io.cassandrajournal.state;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CassandraDurableStateStoreIT extends DurableStateStoreContract {

	private CassandraDurableStateStore store;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.store = CassandraDurableStateStore.create(keyspace.session(),
				CassandraJournalOptions.create().withKeyspace(keyspace.name()), new JacksonEventSerializer());
	}

	@Override
	protected DurableStateStore store() {
		return this.store;
	}

}
