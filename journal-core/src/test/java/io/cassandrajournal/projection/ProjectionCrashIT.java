package io.cassandrajournal.projection;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A projection running in a child JVM over 10,000 tagged events is killed with SIGKILL at random points five
 * times and restarted; at the end every event was handled at least once and the idempotent view equals the
 * fold of the journal.
 */
@CassandraTest
class ProjectionCrashIT {

	/**
	 * 200 entities of 50 events. The kills land in the first thousand events or so (a child's start-up takes most
	 * of the time to each kill); the rest is the last child catching up. 20,000 until 2026-12-02: twice the
	 * catch-up time for no other kill point.
	 */
	private static final int ENTITIES = 200;

	private static final int EVENTS_PER_ENTITY = 50;

	private static final int EVENTS = ENTITIES * EVENTS_PER_ENTITY;

	@Test
	void killedFiveTimesTheProjectionStillHandlesEveryEventAtLeastOnce(TestKeyspace keyspace) throws Exception {
		CqlSession session = keyspace.session();
		session.execute("CREATE TABLE crash_view (persistence_id text, sequence_nr bigint, amount bigint, "
				+ "PRIMARY KEY (persistence_id, sequence_nr))");
		session.execute("CREATE TABLE crash_deliveries (persistence_id text, sequence_nr bigint, n counter, "
				+ "PRIMARY KEY (persistence_id, sequence_nr))");
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		CassandraJournal journal = CassandraJournal.create(session, options, new JacksonEventSerializer());
		String tag = "crash-" + System.nanoTime();
		ExecutorService pool = Executors.newFixedThreadPool(8);
		List<Future<?>> writers = new ArrayList<>();
		for (int p = 0; p < ENTITIES; p++) {
			String pid = tag + "-" + p;
			int base = p;
			writers.add(pool.submit(() -> {
				List<EventToAppend> events = new ArrayList<>();
				for (int i = 1; i <= EVENTS_PER_ENTITY; i++) {
					events.add(EventToAppend.of(new Deposited(base * 1000L + i), tag));
				}
				return result(journal.append(pid, 0, events));
			}));
		}
		for (Future<?> writer : writers) {
			writer.get(5, TimeUnit.MINUTES);
		}
		pool.shutdown();

		Random random = new Random(42);
		List<Long> countsAtKill = new ArrayList<>();
		for (int kill = 0; kill < 5; kill++) {
			Process child = startChild(keyspace, tag);
			Thread.sleep(500 + random.nextInt(2500));
			child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
			countsAtKill.add(viewCount(session));
		}
		Process last = startChild(keyspace, tag);
		try {
			await().atMost(Duration.ofMinutes(4)).pollInterval(Duration.ofSeconds(1)).until(() -> viewCount(session) == EVENTS);
		}
		finally {
			last.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
		}

		Map<String, Long> viewFold = new HashMap<>();
		for (Row row : session.execute("SELECT persistence_id, amount FROM crash_view")) {
			viewFold.merge(row.getString(0), row.getLong(1), Long::sum);
		}
		Map<String, Long> journalFold = new HashMap<>();
		for (int p = 0; p < ENTITIES; p++) {
			String pid = tag + "-" + p;
			result(journal.replay(pid, 1, Long.MAX_VALUE, AccountEvent.class,
					(e) -> journalFold.merge(pid, ((Deposited) e.payload()).amount(), Long::sum)));
		}
		assertThat(viewFold).isEqualTo(journalFold);
		long deliveries = 0;
		for (Row row : session.execute("SELECT n FROM crash_deliveries")) {
			deliveries += row.getLong(0);
		}
		assertThat(deliveries).isGreaterThanOrEqualTo(EVENTS);
		System.out.printf("crash test: view rows at each SIGKILL %s; %d deliveries for %d events (%d re-deliveries)%n",
				countsAtKill, deliveries, EVENTS, deliveries - EVENTS);
		assertThat(countsAtKill).as("the kills landed while the projection was working").anyMatch((c) -> c > 0 && c < EVENTS);
	}

	private static long viewCount(CqlSession session) {
		return session.execute("SELECT count(*) FROM crash_view").one().getLong(0);
	}

	private static Process startChild(TestKeyspace keyspace, String tag) throws Exception {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		Path log = Files.createTempFile("crash-child", ".log");
		Process child = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
				CrashTestProjectionMain.class.getName(), keyspace.contactPoints().get(0).getHostString(),
				String.valueOf(keyspace.contactPoints().get(0).getPort()), keyspace.name(), tag)
			.redirectErrorStream(true)
			.redirectOutput(log.toFile())
			.start();
		await().atMost(Duration.ofMinutes(1)).until(() -> {
			if (!child.isAlive()) {
				throw new IllegalStateException("child exited: " + Files.readString(log));
			}
			return Files.readString(log).contains("STARTED");
		});
		return child;
	}

}
