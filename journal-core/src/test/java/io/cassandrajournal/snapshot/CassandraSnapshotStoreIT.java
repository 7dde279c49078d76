package io.cassandrajournal.snapshot;

import java.util.Map;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CassandraSnapshotStoreIT extends SnapshotStoreContract {

	private CassandraSnapshotStore store;

	private TestKeyspace keyspace;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.store = CassandraSnapshotStore.create(keyspace.session(),
				CassandraJournalOptions.create().withKeyspace(keyspace.name()), new JacksonEventSerializer());
	}

	@Override
	protected SnapshotStore store() {
		return this.store;
	}

	@Test
	void snapshotTableIsTheReferenceOneWithDescendingClustering() {
		Map<String, String> order = new java.util.HashMap<>();
		this.keyspace.session()
			.execute("SELECT column_name, clustering_order, type FROM system_schema.columns WHERE keyspace_name = ? "
					+ "AND table_name = 'snapshots'", this.keyspace.name())
			.forEach((r) -> order.put(r.getString(0), r.getString(2) + " " + r.getString(1)));
		assertThat(order).containsEntry("sequence_nr", "bigint desc")
			.containsEntry("persistence_id", "text none")
			.containsEntry("timestamp", "bigint none")
			.containsEntry("payload", "text none");
	}

	@Test
	void aSnapshotRowInAnotherImplementationsShapeIsSteppedOver() {
		String id = "account-" + System.nanoTime();
		result(this.store.save(id, 3, new Balance(30)));
		this.keyspace.session()
			.execute("INSERT INTO snapshots (persistence_id, sequence_nr, timestamp, payload) VALUES (?, ?, ?, ?)", id,
					7L, System.currentTimeMillis(), "[{\"kind\":\"state\"},{\"amount\":70}]");
		Snapshot<Balance> loaded = result(this.store.loadLatest(id, Long.MAX_VALUE, Balance.class)).orElseThrow();
		assertThat(loaded.sequenceNr()).isEqualTo(3);
		assertThat(loaded.state()).isEqualTo(new Balance(30));
	}

}
