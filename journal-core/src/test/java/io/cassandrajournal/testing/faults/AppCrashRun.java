package io.cassandrajournal.testing.faults;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionHandler;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.state.CassandraDurableStateStore;

import static io.cassandrajournal.testing.Await.result;

/**
 * Application-JVM crashes: an {@link AppCrashMain} JVM (the test classpath) runs writers and a projection, and is
 * killed with {@code SIGKILL} once it has completed a seeded number of operations; this repeats for a few rounds,
 * each JVM continuing where the last left off (same entities, the projection's stored offsets). Then the
 * projection catches up in this JVM, with the same name, offsets and read-model table, and the
 * {@link HistoryChecker} checks the killed JVMs' logs against the tables: operations in flight at a kill are
 * unknown; append attempts in flight may hold their claim (a crash gap, which {@code checkConsistency} must
 * report); the read model after the restarts equals the fold of the journal.
 */
final class AppCrashRun {

	static final int HOT = 3;

	static final int ACCOUNTS = 4;

	static final String INSERT_READ_MODEL = "INSERT INTO crash_read_model (account, sequence_nr, delta) VALUES (?, ?, ?)";

	/**
	 * What a run did and found.
	 *
	 * @param rounds JVMs started and killed
	 * @param operations operations invoked by all of them
	 * @param pendingAtKill operations in flight when their JVM was killed
	 * @param attemptsInFlight append attempts in flight when their JVM was killed
	 * @param checked the checker's result
	 * @param summary a printable summary
	 */
	record Report(int rounds, int operations, int pendingAtKill, int attemptsInFlight, HistoryChecker.Result checked,
			String summary) {
	}

	private AppCrashRun() {
	}

	static String hot(int index) {
		return "crash-hot-" + index;
	}

	static String account(int index) {
		return "crash-account-" + index;
	}

	static CassandraJournalOptions options(String keyspace) {
		return CassandraJournalOptions.create()
			.withKeyspace(keyspace)
			.withUseTagIndex(true)
			.withInFlightWait(Duration.ofSeconds(3));
	}

	static Projection<?> projection(ProjectionHandler<FaultEvent> handler) {
		return Projection.byTag(AppCrashMain.PROJECTION, TagFilter.tag(FaultRun.BANK_TAG), FaultEvent.class, handler,
				ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(100)));
	}

	/**
	 * @param session a session on the node, bound to {@code keyspace}
	 * @param keyspace an empty keyspace
	 * @param node the node's contact point (the child JVMs connect to it)
	 * @param seed when each JVM is killed and what its clients do
	 * @param rounds how many JVMs to start and kill
	 * @param maxOperations a JVM is killed after 20 to this many completed operations
	 * @param workDirectory where the JVMs' logs go
	 * @return the report
	 */
	static Report run(CqlSession session, String keyspace, InetSocketAddress node, long seed, int rounds,
			int maxOperations, Path workDirectory) throws IOException, InterruptedException {
		CassandraJournalOptions options = options(keyspace);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal journal = CassandraJournal.create(session, options, serializer);
		CassandraSnapshotStore.create(session, options, serializer);
		CassandraDurableStateStore.create(session, options, serializer);
		session.execute("CREATE TABLE IF NOT EXISTS crash_read_model (account text, sequence_nr bigint, delta bigint, "
				+ "PRIMARY KEY (account, sequence_nr))");
		History history = new History();
		for (int i = 0; i < HOT; i++) {
			history.entity(hot(i));
		}
		List<Integer> accounts = new ArrayList<>();
		for (int i = 0; i < ACCOUNTS; i++) {
			accounts.add(history.entity(account(i)));
		}
		SplittableRandom random = new SplittableRandom(seed ^ 0x4a564d4b696c6cL);
		List<AttemptRecordingJournal.LostClaim> mayHoldClaims = new ArrayList<>();
		StringBuilder summary = new StringBuilder();
		int pending = 0;
		int inFlight = 0;
		for (int round = 0; round < rounds; round++) {
			Path log = workDirectory.resolve("jvm-" + round + ".log");
			long killAfter = 20 + random.nextInt(Math.max(1, maxOperations - 20));
			Process child = start(node, keyspace, log, history.size(), seed, round, workDirectory.resolve("jvm-" + round + ".out"));
			try {
				Awaitility.await("application JVM " + round + " ready")
					.atMost(Duration.ofSeconds(90))
					.pollInterval(Duration.ofMillis(100))
					.until(() -> !child.isAlive() || CrashLog.isReady(log));
				if (!child.isAlive()) {
					throw new IllegalStateException("application JVM " + round + " exited with " + child.exitValue()
							+ ":\n" + Files.readString(workDirectory.resolve("jvm-" + round + ".out")));
				}
				Awaitility.await("application JVM " + round + " completes " + killAfter + " operations")
					.atMost(Duration.ofSeconds(90))
					.pollInterval(Duration.ofMillis(20))
					.until(() -> !child.isAlive() || CrashLog.completed(log) >= killAfter);
			}
			finally {
				// SIGKILL on Linux: no shutdown hook, no flush, no close.
				child.destroyForcibly();
				child.waitFor(30, TimeUnit.SECONDS);
			}
			CrashLog.Ingested ingested = CrashLog.ingest(log, history);
			mayHoldClaims.addAll(ingested.inFlightAttempts());
			mayHoldClaims.addAll(ingested.lostClaims());
			pending += ingested.pending();
			inFlight += ingested.inFlightAttempts().size();
			summary.append(String.format("  JVM %d: killed after %d completed operations (%d invoked, %d in flight, "
					+ "%d append attempts in flight)%n", round, killAfter, ingested.operations(), ingested.pending(),
					ingested.inFlightAttempts().size()));
		}
		// The projection resumes here from the offsets the killed JVMs saved.
		Map<String, Map<Long, Long>> readModel = catchUp(session, options, serializer, journal, history, accounts);
		HistoryChecker checker = new HistoryChecker(session, options, serializer, history);
		HistoryChecker.Result result = checker.check(List.of(FaultRun.HOT_TAG, FaultRun.BANK_TAG), accounts, readModel,
				mayHoldClaims);
		StringBuilder text = new StringBuilder();
		text.append("application-JVM crash run: seed ").append(seed).append(", ").append(rounds).append(" JVMs killed\n");
		text.append(summary);
		Map<String, Long> outcomes = new HashMap<>();
		for (int op = 0; op < history.size(); op++) {
			outcomes.merge(history.kind(op) + " " + history.outcome(op), 1L, Long::sum);
		}
		text.append("operations: ").append(history.size()).append(' ').append(new java.util.TreeMap<>(outcomes)).append('\n');
		text.append("gaps explained: ").append(result.gapsCoveredByUnknown()).append(" by unknown outcomes, ")
			.append(result.gapsCoveredByLostClaim()).append(" by attempts in flight at a kill or lost claims\n");
		text.append("violations: ").append(result.total()).append(' ').append(result.violations()).append('\n');
		for (HistoryChecker.Violation violation : result.first()) {
			text.append(violation.rule()).append(" on ").append(history.entityName(violation.entity())).append(" at ")
				.append(violation.sequenceNr()).append(": ").append(violation.detail()).append('\n');
			checker.excerpt(violation, 25).forEach((line) -> text.append("    ").append(line).append('\n'));
		}
		return new Report(rounds, history.size(), pending, inFlight, result, text.toString());
	}

	private static Process start(InetSocketAddress node, String keyspace, Path log, int base, long seed, int round,
			Path output) throws IOException {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		ProcessBuilder builder = new ProcessBuilder(java, "-Xmx256m", "-cp", System.getProperty("java.class.path"),
				AppCrashMain.class.getName(), node.getHostString(), Integer.toString(node.getPort()), keyspace,
				log.toString(), Integer.toString(base), Long.toString(seed), Integer.toString(round));
		builder.redirectErrorStream(true);
		builder.redirectOutput(output.toFile());
		return builder.start();
	}

	private static Map<String, Map<Long, Long>> catchUp(CqlSession session, CassandraJournalOptions options,
			JacksonEventSerializer serializer, CassandraJournal journal, History history, List<Integer> accounts) {
		PreparedStatement insert = session.prepare(INSERT_READ_MODEL);
		try (ProjectionEngine engine = ProjectionEngine.builder(journal)
			.readJournal(CassandraReadJournal.create(journal, session, options, serializer))
			.offsetStore(new DurableStateOffsetStore(CassandraDurableStateStore.create(session, options, serializer)))
			.build()) {
			engine.register(projection(ProjectionHandler.blocking(
					(event) -> session.execute(insert.bind(event.persistenceId(), event.sequenceNr(), event.payload().delta())))));
			engine.startAll().toCompletableFuture().join();
			Awaitility.await("projection catch-up after the last kill")
				.atMost(Duration.ofSeconds(60))
				.pollInterval(Duration.ofMillis(250))
				.until(() -> accounts.stream().allMatch((e) -> {
					String pid = history.entityName(e);
					long stored = result(journal.checkConsistency(pid)).storedEvents();
					return readModel(session).getOrDefault(pid, Map.of()).size() >= stored;
				}));
		}
		catch (ConditionTimeoutException ex) {
			// The checker's projection rule reports what is missing.
		}
		return readModel(session);
	}

	private static Map<String, Map<Long, Long>> readModel(CqlSession session) {
		Map<String, Map<Long, Long>> model = new ConcurrentHashMap<>();
		for (Row row : session.execute("SELECT account, sequence_nr, delta FROM crash_read_model")) {
			model.computeIfAbsent(row.getString(0), (k) -> new ConcurrentHashMap<>()).put(row.getLong(1), row.getLong(2));
		}
		return model;
	}

}
