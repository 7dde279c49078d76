package io.cassandrajournal.projection;

import java.net.InetSocketAddress;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testsupport.TestSessions;

/**
 * A projection in its own JVM, for {@link ProjectionCrashIT}: reads a tag with durable offsets and upserts
 * each event into an idempotent view keyed by (persistenceId, sequenceNr); counts deliveries in a counter
 * table to show the duplicates at-least-once produces. Runs until killed.
 * <p>
 * Arguments: host, port, keyspace, tag.
 */
public final class CrashTestProjectionMain {

	private CrashTestProjectionMain() {
	}

	public static void main(String[] args) throws Exception {
		CqlSession session = TestSessions.open(List.of(new InetSocketAddress(args[0], Integer.parseInt(args[1]))),
				"datacenter1", args[2]);
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(args[2]).withUseTagIndex(true);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal journal = CassandraJournal.create(session, options, serializer);
		PreparedStatement upsert = session.prepare("INSERT INTO crash_view (persistence_id, sequence_nr, amount) VALUES (?, ?, ?)");
		PreparedStatement count = session.prepare("UPDATE crash_deliveries SET n = n + 1 WHERE persistence_id = ? AND sequence_nr = ?");
		ProjectionEngine engine = ProjectionEngine.builder(journal)
			.readJournal(CassandraReadJournal.create(journal, session, options, serializer))
			.offsetStore(new DurableStateOffsetStore(CassandraDurableStateStore.create(session, options, serializer)))
			.build();
		engine.register(Projection.byTag("crash-view", TagFilter.tag(args[3]), AccountEvent.class, (event) -> {
			long amount = ((AccountEvent.Deposited) event.payload()).amount();
			session.execute(count.bind(event.persistenceId(), event.sequenceNr()));
			return session.executeAsync(upsert.bind(event.persistenceId(), event.sequenceNr(), amount))
				.thenApply((rs) -> (Void) null);
		}, ProjectionSettings.defaults().withPollInterval(java.time.Duration.ofMillis(200))));
		engine.startAll().toCompletableFuture().join();
		System.out.println("STARTED");
		System.out.flush();
		Thread.sleep(Long.MAX_VALUE);
	}

}
