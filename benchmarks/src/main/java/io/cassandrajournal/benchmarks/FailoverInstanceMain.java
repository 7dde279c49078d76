package io.cassandrajournal.benchmarks;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.config.DriverConfigLoader;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;

/**
 * One instance of {@link FailoverWorkloads}, in its own JVM: shares the projection with the other instances
 * (default settings but {@link FailoverWorkloads#SEGMENTS} segments, the lease timing it is given) and appends a line per
 * event its handler is called for ({@code epoch millis, persistenceId, sequenceNr}) to a file, one unbuffered
 * write per line, so that a SIGKILL loses at most the line being written. Runs until killed (bounded).
 * <p>
 * Arguments: host port keyspace tag instance-id handled-file lease-timeout-millis renew-interval-millis.
 */
public final class FailoverInstanceMain {

	private FailoverInstanceMain() {
	}

	public static void main(String[] args) throws Exception {
		CqlSession session = CqlSession.builder()
			.addContactPoint(new InetSocketAddress(args[0], Integer.parseInt(args[1])))
			.withLocalDatacenter("datacenter1")
			.withConfigLoader(DriverConfigLoader.programmaticBuilder()
				.withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(30))
				.build())
			.build();
		CassandraJournalOptions options = FailoverWorkloads.options(args[2]);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal journal = CassandraJournal.create(session, options, serializer);
		try (OutputStream handled = new FileOutputStream(args[5], true)) {
			ProjectionEngine engine = ProjectionEngine.builder(journal)
				.readJournal(CassandraReadJournal.create(journal, session, options, serializer))
				.offsetStore(new DurableStateOffsetStore(CassandraDurableStateStore.create(session, options, serializer)))
				.sharing(ProjectionSharing.create(session, options)
					.withInstanceId(args[4])
					.withLeaseTiming(Duration.ofMillis(Long.parseLong(args[6])), Duration.ofMillis(Long.parseLong(args[7]))))
				.build();
			engine.register(Projection.byTag(FailoverWorkloads.PROJECTION, TagFilter.tag(args[3]), String.class,
					(EventHandler<String>) (event) -> {
						write(handled, System.currentTimeMillis() + "\t" + event.persistenceId() + "\t"
								+ event.sequenceNr() + "\n");
						return CompletableFuture.completedFuture(null);
					}, ProjectionSettings.defaults().withSegments(FailoverWorkloads.SEGMENTS)));
			engine.startAll().toCompletableFuture().join();
			System.out.println("STARTED");
			System.out.flush();
			// Runs until the benchmark kills it; bounded in case the benchmark JVM died first.
			Thread.sleep(Duration.ofMinutes(30).toMillis());
		}
		System.exit(0);
	}

	private static synchronized void write(OutputStream out, String line) {
		try {
			out.write(line.getBytes(StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

}
