package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.state.DurableStateStore;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;

/**
 * What the tests of shared projections on a real node (SharedProjectionsIT, SharedFanOutIT, SharedFanOutTermsIT)
 * set up the same way: a keyspace's journal (tag index on), read journal, durable state store and lease table, a
 * sharing engine's builder for one instance, and the lease rows read back. It lives beside them rather than in
 * {@code testing/}: the lease table, its rows and the engine's test clock are package-private.
 */
final class SharedProjectionFixture {

	/** The lease timeout the tests share: short, so that a takeover fits in a test's wait. */
	static final Duration LEASE_TIMEOUT = Duration.ofSeconds(3);

	/** The renewal interval the tests share. */
	static final Duration RENEW_INTERVAL = Duration.ofMillis(500);

	final TestKeyspace keyspace;

	final CassandraJournalOptions options;

	final CassandraJournal journal;

	final CassandraReadJournal query;

	final CassandraDurableStateStore state;

	final LeaseTable leases;

	/** @param keyspace the test class's keyspace */
	SharedProjectionFixture(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		this.journal = CassandraJournal.create(keyspace.session(), this.options, serializer);
		this.query = CassandraReadJournal.create(this.journal, keyspace.session(), this.options, serializer);
		this.state = CassandraDurableStateStore.create(keyspace.session(), this.options, serializer);
		this.leases = LeaseTable.create(keyspace.session(), this.options);
	}

	/**
	 * @param instanceId the instance
	 * @param cursors where its cursors are kept (the fixture's {@link #state}, or a store wrapping it)
	 * @return a builder of one sharing instance's engine: the fixture's journal and read journal, the lease timing
	 * above; the caller adds what else it needs (a test clock) and builds
	 */
	ProjectionEngine.Builder engine(String instanceId, DurableStateStore cursors) {
		return ProjectionEngine.builder(this.journal)
			.readJournal(this.query)
			.offsetStore(new DurableStateOffsetStore(cursors))
			.sharing(ProjectionSharing.create(this.keyspace.session(), this.options)
				.withInstanceId(instanceId)
				.withLeaseTiming(LEASE_TIMEOUT, RENEW_INTERVAL));
	}

	/**
	 * @param projection the projection (or fan-out) name of the lease rows
	 * @param segments its number of segments
	 * @return each held segment's owner, from the lease rows
	 */
	Map<String, String> owners(String projection, int segments) {
		Map<String, String> owners = new HashMap<>();
		for (String segment : segmentKeys(segments)) {
			Optional<Lease> row = result(this.leases.read(projection, segment));
			row.filter((lease) -> lease.owner() != null).ifPresent((lease) -> owners.put(segment, lease.owner()));
		}
		return owners;
	}

	/**
	 * @param segments a number of segments
	 * @return the segment keys, lowest range first
	 */
	static List<String> segmentKeys(int segments) {
		return SliceRange.split(segments).stream().map(SliceRange::key).toList();
	}

}
