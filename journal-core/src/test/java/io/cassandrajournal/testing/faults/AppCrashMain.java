package io.cassandrajournal.testing.faults;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.NoNodeAvailableException;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.entity.CommandResult;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.JournalConcurrencyException;
import io.cassandrajournal.journal.JournalWriteUncertainException;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionHandler;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.faults.History.OpKind;
import io.cassandrajournal.testing.faults.History.Outcome;
import io.cassandrajournal.testsupport.TestSessions;

/**
 * The application JVM of {@link AppCrashRun}, which SIGKILLs it at a seeded point: two clients append to the
 * contended entities, two run account commands through two repositories (one cached), and the projection by
 * tag {@code bank} writes its read model to a table (idempotent rows) before its offsets are saved. Every
 * operation goes to a {@link CrashLog}.
 * <p>
 * Arguments: host port keyspace log base seed instance.
 */
public final class AppCrashMain {

	static final String PROJECTION = "crash-run-accounts";

	private final CrashLog log;

	private final long seed;

	private AppCrashMain(CrashLog log, long seed) {
		this.log = log;
		this.seed = seed;
	}

	public static void main(String[] args) throws Exception {
		InetSocketAddress node = new InetSocketAddress(args[0], Integer.parseInt(args[1]));
		String keyspace = args[2];
		CrashLog log = new CrashLog(Path.of(args[3]), Integer.parseInt(args[4]));
		long seed = Long.parseLong(args[5]);
		int instance = Integer.parseInt(args[6]);
		CqlSession session = TestSessions.open(List.of(node), "datacenter1", keyspace);
		CassandraJournalOptions options = AppCrashRun.options(keyspace);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal cassandra = CassandraJournal.create(session, options, serializer);
		AttemptRecordingJournal journal = new AttemptRecordingJournal(cassandra).withLog(log);
		CassandraSnapshotStore snapshots = CassandraSnapshotStore.create(session, options, serializer);
		EntityRepository<Account, FaultEvent> repositoryA = EntityRepository
			.create(journal, snapshots, new Account.Entity(), 3).withCache(100);
		EntityRepository<Account, FaultEvent> repositoryB = EntityRepository.create(journal, snapshots,
				new Account.Entity(), 3);
		PreparedStatement insert = session.prepare(AppCrashRun.INSERT_READ_MODEL);
		ProjectionEngine engine = ProjectionEngine.builder(cassandra)
			.readJournal(CassandraReadJournal.create(cassandra, session, options, serializer))
			.offsetStore(new DurableStateOffsetStore(CassandraDurableStateStore.create(session, options, serializer)))
			.build();
		engine.register(AppCrashRun.projection(ProjectionHandler.blocking(
				(event) -> session.execute(insert.bind(event.persistenceId(), event.sequenceNr(), event.payload().delta())))));
		engine.startAll().toCompletableFuture().join();
		log.ready();
		AppCrashMain main = new AppCrashMain(log, seed * 31 + instance);
		List<Thread> clients = new ArrayList<>();
		for (int c = 0; c < 2; c++) {
			int client = c;
			clients.add(new Thread(() -> main.appendClient(client, journal), "append-" + c));
		}
		for (int c = 0; c < 2; c++) {
			int client = 2 + c;
			EntityRepository<Account, FaultEvent> repository = (c == 0) ? repositoryA : repositoryB;
			clients.add(new Thread(() -> main.bankClient(client, repository), "bank-" + c));
		}
		clients.forEach(Thread::start);
		// Runs until the parent kills it; bounded in case the parent died first.
		for (Thread client : clients) {
			client.join(Duration.ofMinutes(10).toMillis());
		}
		engine.close();
		session.close();
		System.exit(0);
	}

	private void appendClient(int client, AttemptRecordingJournal journal) {
		SplittableRandom random = new SplittableRandom(this.seed * 1_000_003L + client);
		long[] known = new long[AppCrashRun.HOT];
		while (!Thread.currentThread().isInterrupted()) {
			int which = random.nextInt(AppCrashRun.HOT);
			String pid = AppCrashRun.hot(which);
			int count = 1 + random.nextInt(3);
			long expected = known[which];
			int op = this.log.invoke(OpKind.APPEND, client, which, expected, count, 0);
			List<EventToAppend> events = new ArrayList<>(count);
			for (int i = 0; i < count; i++) {
				events.add(EventToAppend.of(new FaultEvent(op, i, 0), FaultRun.HOT_TAG));
			}
			try {
				AppendResult appended = await(journal.append(pid, expected, events));
				this.log.complete(op, Outcome.OK, appended.firstSequenceNr(), appended.lastSequenceNr());
				known[which] = appended.lastSequenceNr();
			}
			catch (Throwable failure) {
				Throwable cause = complete(op, failure);
				if (cause instanceof JournalConcurrencyException conflict) {
					known[which] = conflict.actualSequenceNr();
				}
				else if (cause instanceof JournalWriteUncertainException uncertain) {
					known[which] = uncertain.lastSequenceNr();
				}
				else {
					try {
						known[which] = await(journal.highestSequenceNr(pid));
					}
					catch (Throwable again) {
						// the next append finds out
					}
				}
			}
		}
	}

	private void bankClient(int client, EntityRepository<Account, FaultEvent> repository) {
		SplittableRandom random = new SplittableRandom(this.seed * 1_000_003L + client);
		while (!Thread.currentThread().isInterrupted()) {
			int account = random.nextInt(AppCrashRun.ACCOUNTS);
			boolean deposit = random.nextInt(100) < 55;
			long amount = 1 + random.nextInt(deposit ? 100 : 150);
			int op = this.log.invoke(deposit ? OpKind.DEPOSIT : OpKind.WITHDRAW, client, AppCrashRun.HOT + account, 0, 1,
					amount);
			try {
				CommandResult<Account, FaultEvent> done = await(repository.execute(AppCrashRun.account(account),
						(state) -> {
							if (!deposit && state.state().balance() < amount) {
								throw new Account.Overdraft();
							}
							return List.of(new FaultEvent(op, 0, deposit ? amount : -amount));
						}));
				long seq = done.state().sequenceNr();
				this.log.complete(op, Outcome.OK, seq, seq);
			}
			catch (Throwable failure) {
				complete(op, failure);
			}
		}
	}

	/** As {@link FaultRun}'s classification: certainly not applied, rejected, or unknown. */
	private Throwable complete(int op, Throwable failure) {
		Throwable cause = Errors.unwrap(failure);
		if (cause instanceof ExecutionException && cause.getCause() != null) {
			cause = Errors.unwrap(cause.getCause());
		}
		if (cause instanceof Account.Overdraft) {
			this.log.complete(op, Outcome.REJECTED, 0, 0);
		}
		else if (cause instanceof JournalConcurrencyException conflict) {
			this.log.complete(op, Outcome.FAILED, 0, conflict.actualSequenceNr());
		}
		else if (cause instanceof JournalWriteUncertainException uncertain) {
			this.log.complete(op, Outcome.UNKNOWN, uncertain.firstSequenceNr(), uncertain.lastSequenceNr());
		}
		else if ((cause instanceof JournalUnavailableException || cause instanceof NoNodeAvailableException)
				&& !FaultRun.mayHaveApplied(cause)) {
			this.log.complete(op, Outcome.FAILED, 0, 0);
		}
		else {
			this.log.complete(op, Outcome.UNKNOWN, 0, 0);
		}
		return cause;
	}

	private static <T> T await(CompletionStage<T> stage) throws Exception {
		return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
	}

}
