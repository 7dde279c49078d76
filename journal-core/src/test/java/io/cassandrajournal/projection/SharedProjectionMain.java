package io.cassandrajournal.projection;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.state.DurableStateConflictException;
import io.cassandrajournal.state.DurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testsupport.TestSessions;

/**
 * One instance of the application of {@link SharedProjectionRun}, in its own JVM: shares the projection of
 * {@link SharedProjectionRun#SEGMENTS} segments with the other instances through leases, writes each event to
 * an idempotent read-model table and counts its deliveries in a counter table, and appends every cursor write it
 * attempts (segment key, revision, epoch, offset, outcome) to a file, one line per write, unbuffered so that a
 * SIGKILL loses at most the line being written. Runs until killed.
 * <p>
 * Arguments: contact-points (host:port, comma-separated: every node of a cluster, so that a restart finds one up)
 * datacenter keyspace tag instance-id saves-file.
 */
public final class SharedProjectionMain {

	private SharedProjectionMain() {
	}

	public static void main(String[] args) {
		try {
			run(args);
		}
		catch (Throwable ex) {
			// The driver's threads would keep a JVM whose start-up failed alive: exit, so the test sees it.
			ex.printStackTrace();
			System.exit(1);
		}
	}

	private static void run(String[] args) throws Exception {
		List<InetSocketAddress> contactPoints = Arrays.stream(args[0].split(","))
			.map((point) -> new InetSocketAddress(point.substring(0, point.lastIndexOf(':')),
					Integer.parseInt(point.substring(point.lastIndexOf(':') + 1))))
			.toList();
		CqlSession session = TestSessions.open(contactPoints, args[1], args[2]);
		String tag = args[3];
		String instance = args[4];
		CassandraJournalOptions options = SharedProjectionRun.options(args[2]);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal journal = CassandraJournal.create(session, options, serializer);
		// At LOCAL_QUORUM (the test reads them so): on a cluster a write at the driver's LOCAL_ONE could be missing
		// from the test's reads. The upsert is idempotent, so the driver retries it on another node when its
		// coordinator goes down; the counter is not (a retried handler call may count twice).
		PreparedStatement upsert = session.prepare(SimpleStatement.newInstance(SharedProjectionRun.UPSERT_READ_MODEL)
			.setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM)
			.setIdempotent(true));
		PreparedStatement count = session.prepare(SimpleStatement.newInstance(SharedProjectionRun.COUNT_DELIVERY)
			.setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM));
		try (OutputStream saves = new FileOutputStream(args[5], true)) {
			Object lines = new Object();
			DurableStateStore recording = new CursorWrites(CassandraDurableStateStore.create(session, options, serializer),
					(key, revision, offset, epoch, error) -> {
						String outcome = (error == null) ? SharedProjectionRun.Save.APPLIED
								: (Errors.unwrap(error) instanceof DurableStateConflictException)
										? SharedProjectionRun.Save.REFUSED : SharedProjectionRun.Save.UNKNOWN;
						String line = new SharedProjectionRun.Save(instance, key, revision, epoch, offset, outcome).line();
						synchronized (lines) {
							write(saves, line);
						}
					});
			ProjectionEngine engine = ProjectionEngine.builder(journal)
				.readJournal(CassandraReadJournal.create(journal, session, options, serializer))
				.offsetStore(new DurableStateOffsetStore(recording))
				.sharing(ProjectionSharing.create(session, options)
					.withInstanceId(instance)
					.withLeaseTiming(SharedProjectionRun.LEASE_TIMEOUT, SharedProjectionRun.RENEW_INTERVAL))
				.build();
			engine.register(Projection.byTag(SharedProjectionRun.PROJECTION, TagFilter.tag(tag), AccountEvent.class,
					EventHandler.blocking((event) -> {
						long amount = ((AccountEvent.Deposited) event.payload()).amount();
						session.execute(count.bind(event.persistenceId(), event.sequenceNr()));
						session.execute(upsert.bind(event.persistenceId(), event.sequenceNr(), amount));
					}),
					ProjectionSettings.defaults()
						.withSegments(SharedProjectionRun.SEGMENTS)
						// A handler call that failed while a node of a cluster went down is retried for about
						// 40 s before the segment stops (the default, 3 retries from 1 s, is about 7 s).
						.withMaxRetries(10)
						.withRetryBackoff(Duration.ofMillis(500), Duration.ofSeconds(5))
						.withPollInterval(Duration.ofMillis(100))
						.withFeed(new FeedSettings(Duration.ZERO, SharedProjectionRun.BACKTRACK,
								SharedProjectionRun.PAGE_SIZE))));
			engine.startAll().toCompletableFuture().join();
			System.out.println("STARTED");
			System.out.flush();
			// Runs until the test kills it; bounded in case the test JVM died first.
			Thread.sleep(Duration.ofMinutes(20).toMillis());
		}
		System.exit(0);
	}

	/** Appends a line to the saves file in one write call: a SIGKILL lands between lines or truncates the last. */
	private static void write(OutputStream saves, String line) {
		try {
			saves.write((line + "\n").getBytes(StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
