package io.cassandrajournal.testing;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.NoNodeAvailableException;
import com.datastax.oss.driver.api.core.connection.ClosedConnectionException;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchableStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.servererrors.UnavailableException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.WriteType;

/**
 * A real session with switchable failures: while armed, statements matching a predicate fail with a
 * driver timeout instead of reaching Cassandra. Everything else goes to the real node.
 * <p>
 * Counted faults ({@link #failBeforeSending}, {@link #applyThenTimeOut}, {@link #applyThenDriverTimeout})
 * hit the next {@code times} statements a predicate matches, then disarm themselves; the predicates below
 * ({@link #writesTo}, {@link #lightweightTransactions}, {@link #cqlContaining}) target one kind of write.
 * A fault that applies the statement before failing shows the caller exactly what Cassandra shows it when
 * the coordinator gave up waiting for replicas: the write may have happened.
 */
public final class FaultInjectingSession {

	private final CqlSession delegate;

	private volatile Predicate<Statement<?>> failing = (s) -> false;

	private final AtomicInteger injected = new AtomicInteger();

	private volatile long batchDelayMillis;

	private final Object failOnceLock = new Object();

	private String failOnceCql;

	private int failOncePassing;

	public FaultInjectingSession(CqlSession delegate) {
		this.delegate = delegate;
	}

	public CqlSession session() {
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				this::invoke);
	}

	/** Fails every batch (the event writes) until {@link #heal()}. */
	public void failBatches() {
		this.failing = (s) -> s instanceof BatchStatement;
	}

	/**
	 * Fails batches, deletes and claim releases until {@link #heal()}: the append dies between claim and events, as
	 * in a crash. Claims go through, every one of them (a later append on this session claims too): a release is told
	 * from a claim by its values ({@code SET max_sequence_nr = ? ... IF max_sequence_nr = ?} moves the head down), or
	 * is the first append's {@code DELETE ... IF max_sequence_nr = ?}.
	 */
	public void failEverythingButTheClaim() {
		this.failing = (s) -> s instanceof BatchStatement || (s instanceof BoundStatement bound
				&& (bound.getPreparedStatement().getQuery().startsWith("DELETE") || isRelease(bound)));
	}

	/**
	 * @return matches claim releases: a conditional update that moves the head down, or the first append's
	 * conditional delete of the head row
	 */
	public static Predicate<Statement<?>> claimReleases() {
		return (s) -> s instanceof BoundStatement bound && (isRelease(bound) || (cql(s).startsWith("DELETE")
				&& cql(s).contains(" IF max_sequence_nr")));
	}

	/**
	 * @param statement a bound statement
	 * @return whether it is a conditional update that moves the head down ({@code SET max_sequence_nr = ?, ... IF
	 * max_sequence_nr = ?} with a lower new value): a release of a claim, not a claim
	 */
	static boolean isRelease(BoundStatement statement) {
		String cql = statement.getPreparedStatement().getQuery();
		if (!cql.contains(" IF max_sequence_nr") || !cql.contains("SET max_sequence_nr = ?")) {
			return false;
		}
		int last = statement.size() - 1;
		return !statement.isNull(0) && !statement.isNull(last) && statement.getLong(0) < statement.getLong(last);
	}

	/** Delays every batch: the events are stamped and claimed, then become visible this much later. */
	public void delayBatches(java.time.Duration delay) {
		this.batchDelayMillis = delay.toMillis();
	}

	/**
	 * Fails one read: the next statement whose CQL contains {@code cqlFragment} fails with a driver timeout,
	 * after {@code passing} such statements went through; later ones reach the node again.
	 * @param cqlFragment a part of the statement's CQL, for example {@code "FROM ks.events_by_tag"}
	 * @param passing matching statements to let through first
	 */
	public void failOnce(String cqlFragment, int passing) {
		synchronized (this.failOnceLock) {
			this.failOnceCql = cqlFragment;
			this.failOncePassing = passing;
		}
	}

	/** Fails the next statement whose CQL contains {@code cqlFragment}, once (see {@link #failOnce(String, int)}). */
	public void failOnce(String cqlFragment) {
		failOnce(cqlFragment, 0);
	}

	private boolean takeFailOnce(Statement<?> statement) {
		String cql = (statement instanceof BoundStatement bound) ? bound.getPreparedStatement().getQuery()
				: (statement instanceof com.datastax.oss.driver.api.core.cql.SimpleStatement simple) ? simple.getQuery()
						: "";
		synchronized (this.failOnceLock) {
			if (this.failOnceCql == null || !cql.contains(this.failOnceCql)) {
				return false;
			}
			if (this.failOncePassing > 0) {
				this.failOncePassing--;
				return false;
			}
			this.failOnceCql = null;
			return true;
		}
	}

	/**
	 * Fails every bound statement whose CQL starts with a text (such as one table's deletes) until
	 * {@link #heal()}.
	 * @param cqlPrefix the start of the prepared statement's query
	 */
	public void failStatementsStartingWith(String cqlPrefix) {
		this.failing = (s) -> s instanceof BoundStatement bound
				&& bound.getPreparedStatement().getQuery().startsWith(cqlPrefix);
	}

	/** Fails every statement matching {@code which} with a driver timeout until {@link #heal()}. */
	public void failMatching(Predicate<Statement<?>> which) {
		this.failing = which;
	}

	/** @return a predicate on bound statements whose CQL contains {@code text} */
	public static Predicate<Statement<?>> cqlContains(String text) {
		return (s) -> s instanceof BoundStatement bound && bound.getPreparedStatement().getQuery().contains(text);
	}

	/**
	 * Holds every statement matching {@code which} for {@code delay} before sending it to the node (a request
	 * stuck in a slow coordinator), until {@link #heal()}.
	 * @param which the statements to delay
	 * @param delay how long each is held
	 */
	public void delayMatching(Predicate<Statement<?>> which, java.time.Duration delay) {
		this.delayed = which;
		this.delayMillis = delay.toMillis();
	}

	private volatile Predicate<Statement<?>> delayed = (s) -> false;

	/**
	 * Executes the next statement matching {@code which} (after {@code passing} matching ones went through) on the
	 * node at once, and holds its answer for {@code delay}: a read that started early and whose result arrives
	 * late (a slow response), once.
	 * @param which the statements to consider
	 * @param passing matching statements to let through first
	 * @param delay how long the answer is held
	 */
	public void delayAnswerOnce(Predicate<Statement<?>> which, int passing, java.time.Duration delay) {
		AtomicInteger seen = new AtomicInteger();
		this.staged.add(new StagedFault(which.and((s) -> seen.getAndIncrement() >= passing), new AtomicInteger(1),
				() -> CompletableFuture.supplyAsync(() -> null, CompletableFuture.delayedExecutor(delay.toMillis(),
						java.util.concurrent.TimeUnit.MILLISECONDS)),
				null));
	}

	/**
	 * Executes the next statement matching {@code which} (after {@code passing} matching ones went through) on the
	 * node at once, then runs {@code meanwhile} and waits for it before the caller gets the statement's own answer:
	 * something that happens between a read and the caller's use of its result (a deleteTo that completes just
	 * after a replay read its mark, say), once.
	 * @param which the statements to consider
	 * @param passing matching statements to let through first
	 * @param meanwhile what happens between the statement's execution and its answer
	 */
	public void answerAfter(Predicate<Statement<?>> which, int passing,
			Supplier<? extends CompletionStage<?>> meanwhile) {
		AtomicInteger seen = new AtomicInteger();
		this.staged.add(new StagedFault(which.and((s) -> seen.getAndIncrement() >= passing), new AtomicInteger(1),
				meanwhile, null));
	}

	private volatile long delayMillis;

	/** Throwables thrown by {@code executeAsync} itself ({@link #throwOnSend}), tried first. */
	private final List<Thrown> thrown = new CopyOnWriteArrayList<>();

	private record Thrown(Predicate<Statement<?>> which, AtomicInteger remaining, Supplier<? extends Throwable> what) {
	}

	/**
	 * Makes {@code executeAsync} itself throw for the next {@code times} matching statements, instead of returning a
	 * stage: a driver or code path that throws on the caller's thread (an {@code Error} included).
	 * @param which the statements
	 * @param times how many of them
	 * @param what the throwable to throw, a new one each time
	 */
	public void throwOnSend(Predicate<Statement<?>> which, int times, Supplier<? extends Throwable> what) {
		this.thrown.add(new Thrown(which, new AtomicInteger(times), what));
	}

	public void heal() {
		this.thrown.clear();
		this.delayed = (s) -> false;
		this.failing = (s) -> false;
		this.faults.clear();
		this.staged.clear();
		this.lateFailures.clear();
		this.lostConnections.clear();
	}

	public int injected() {
		return this.injected.get();
	}

	/**
	 * A Paxos proposal a quorum accepted whose commit did not happen ({@link #acceptWithoutCommit}): applied by the
	 * next Paxos round, not cleared by {@link #heal()} (an accepted proposal stays accepted whatever the client does).
	 */
	private final AtomicReference<Statement<?>> acceptedProposal = new AtomicReference<>();

	/**
	 * The next lightweight transaction matching {@code which} is not sent; its caller sees the server's {@code CAS}
	 * write timeout, as when a quorum accepted its proposal and the commit timed out. Cassandra completes such a
	 * proposal in the next Paxos round on the row: here, the next lightweight transaction or serial read sent
	 * through this session first applies the held statement, then runs. A plain read (at the journal's consistency)
	 * does not see it. One statement at a time; a lightweight transaction on another row applies it too (tests use
	 * one row).
	 * @param which the conditional statement to hold (a claim release, say)
	 */
	public void acceptWithoutCommit(Predicate<Statement<?>> which) {
		this.proposalToAccept = which;
	}

	private volatile @org.jspecify.annotations.Nullable Predicate<Statement<?>> proposalToAccept;

	/** @return whether a held proposal ({@link #acceptWithoutCommit}) is still waiting for a Paxos round */
	public boolean proposalPending() {
		return this.acceptedProposal.get() != null;
	}

	private static boolean isPaxosRound(Statement<?> statement) {
		ConsistencyLevel level = statement.getConsistencyLevel();
		boolean serialRead = level != null && (level.name().equals("SERIAL") || level.name().equals("LOCAL_SERIAL"));
		return serialRead || isConditional(cql(statement));
	}

	/**
	 * @return the held proposal's stage, then the statement's, when {@code statement} is the Paxos round that holds
	 * it or completes it; null otherwise
	 */
	private @org.jspecify.annotations.Nullable CompletionStage<?> paxos(Statement<?> statement) {
		if (!isPaxosRound(statement)) {
			return null;
		}
		Predicate<Statement<?>> toAccept = this.proposalToAccept;
		if (toAccept != null && toAccept.test(statement)) {
			this.proposalToAccept = null;
			this.acceptedProposal.set(statement);
			this.injected.incrementAndGet();
			return CompletableFuture.failedFuture(writeTimeout(statement));
		}
		Statement<?> accepted = this.acceptedProposal.getAndSet(null);
		if (accepted == null) {
			return null;
		}
		return this.delegate.executeAsync(accepted).thenCompose((committed) -> this.delegate.executeAsync(statement));
	}

	private Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
		if (method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof Statement<?> statement) {
			for (Thrown throwing : this.thrown) {
				if (throwing.which().test(statement) && throwing.remaining().getAndDecrement() > 0) {
					this.injected.incrementAndGet();
					throw throwing.what().get();
				}
			}
			CompletionStage<?> lost = injectLostConnection(statement);
			if (lost != null) {
				return lost;
			}
			return releaseAfter(statement, (CompletionStage<?>) invokeOthers(method, args));
		}
		return invokeOthers(method, args);
	}

	private Object invokeOthers(Method method, Object[] args) throws Throwable {
		if (method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof Statement<?> statement) {
			for (Function<Statement<?>, CompletionStage<?>> fault : List.<Function<Statement<?>, CompletionStage<?>>>of(
					this::paxos, this::injectLate, this::injectStaged, this::injectCounted)) {
				CompletionStage<?> faulty = fault.apply(statement);
				if (faulty != null) {
					return faulty;
				}
			}
		}
		if (method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof Statement<?> statement && (this.failing.test(statement) || takeFailOnce(statement))) {
			this.injected.incrementAndGet();
			return CompletableFuture.failedFuture(new DriverTimeoutException("injected failure"));
		}
		if (method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof Statement<?> statement && this.delayed.test(statement)) {
			java.util.concurrent.Executor later = CompletableFuture.delayedExecutor(this.delayMillis,
					java.util.concurrent.TimeUnit.MILLISECONDS);
			return CompletableFuture.supplyAsync(() -> null, later)
				.thenCompose((ignored) -> this.delegate.executeAsync(statement));
		}
		if (this.batchDelayMillis > 0 && method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof BatchStatement) {
			java.util.concurrent.Executor later = CompletableFuture.delayedExecutor(this.batchDelayMillis,
					java.util.concurrent.TimeUnit.MILLISECONDS);
			return CompletableFuture.supplyAsync(() -> null, later)
				.thenCompose((ignored) -> this.delegate.executeAsync((Statement<?>) args[0]));
		}
		try {
			return method.invoke(this.delegate, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}


	/** Counted faults, tried in the order they were armed. */
	private final List<Fault> faults = new CopyOnWriteArrayList<>();

	private enum Kind {

		BEFORE_SENDING, APPLY_THEN_WRITE_TIMEOUT, APPLY_THEN_DRIVER_TIMEOUT, WRITE_TIMEOUT_NOT_APPLIED, APPLY_THEN_RESEND

	}

	private record Fault(Predicate<Statement<?>> which, AtomicInteger remaining, Kind kind) {
	}

	/** Failures answered late ({@link #failBeforeSendingAfter}), tried before the counted faults. */
	private final List<LateFailure> lateFailures = new CopyOnWriteArrayList<>();

	private record LateFailure(Predicate<Statement<?>> which, AtomicInteger remaining, long afterMillis) {
	}

	/**
	 * As {@link #failBeforeSending}, answered {@code after} the statement was sent to this session: a write that
	 * fails late without reaching a replica (a coordinator that could not reach the replicas at that moment).
	 * @param which the statements to fail
	 * @param times how many of them
	 * @param after how long after its send each one fails
	 */
	public void failBeforeSendingAfter(Predicate<Statement<?>> which, int times, java.time.Duration after) {
		this.lateFailures.add(new LateFailure(which, new AtomicInteger(times), after.toMillis()));
	}

	private @org.jspecify.annotations.Nullable CompletionStage<?> injectLate(Statement<?> statement) {
		for (LateFailure late : this.lateFailures) {
			if (late.which().test(statement) && late.remaining().getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
				this.injected.incrementAndGet();
				return CompletableFuture.supplyAsync(() -> null,
						CompletableFuture.delayedExecutor(late.afterMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
					.thenCompose((ignored) -> CompletableFuture.failedFuture(new NoNodeAvailableException()));
			}
		}
		return null;
	}

	/**
	 * Fails the next {@code times} matching statements without sending them, with the driver's
	 * {@link NoNodeAvailableException}: a definite "not applied".
	 * @param which the statements to fail
	 * @param times how many of them ({@code Integer.MAX_VALUE}: until {@link #heal()})
	 */
	public void failBeforeSending(Predicate<Statement<?>> which, int times) {
		this.faults.add(new Fault(which, new AtomicInteger(times), Kind.BEFORE_SENDING));
	}

	/**
	 * Executes the next {@code times} matching statements on the real node and, once each has completed,
	 * reports the server-side timeout Cassandra returns for that kind of write instead of its result: a
	 * {@link WriteTimeoutException} with write type {@code CAS} for a lightweight transaction,
	 * {@code UNLOGGED_BATCH} / {@code BATCH} for batches, {@code SIMPLE} otherwise. A conditional statement
	 * that was not applied (its condition failed) is reported the same way: the caller cannot tell.
	 * @param which the statements to apply and then fail
	 * @param times how many of them ({@code Integer.MAX_VALUE}: until {@link #heal()})
	 */
	public void applyThenTimeOut(Predicate<Statement<?>> which, int times) {
		this.faults.add(new Fault(which, new AtomicInteger(times), Kind.APPLY_THEN_WRITE_TIMEOUT));
	}

	/**
	 * As {@link #applyThenTimeOut}, with the client-side {@link DriverTimeoutException} (the request was sent,
	 * no answer came within the request timeout).
	 * @param which the statements to apply and then fail
	 * @param times how many of them
	 */
	public void applyThenDriverTimeout(Predicate<Statement<?>> which, int times) {
		this.faults.add(new Fault(which, new AtomicInteger(times), Kind.APPLY_THEN_DRIVER_TIMEOUT));
	}

	/**
	 * Executes the next {@code times} matching statements on the real node twice and answers with the second
	 * attempt's result: the driver's re-send of a request whose first attempt applied but whose answer was lost
	 * (it retries even a non-idempotent lightweight transaction after an unavailable or a read timeout). A conditional
	 * statement's second attempt then reports "not applied" with the row its first attempt left.
	 * @param which the statements to send twice
	 * @param times how many of them
	 */
	public void applyThenResend(Predicate<Statement<?>> which, int times) {
		this.faults.add(new Fault(which, new AtomicInteger(times), Kind.APPLY_THEN_RESEND));
	}

	/**
	 * Reports the next {@code times} matching statements as timed out on the server (as
	 * {@link #applyThenTimeOut}) without sending them: a Paxos round that never got its proposal accepted.
	 * @param which the statements to fail
	 * @param times how many of them
	 */
	public void timeOutWithoutApplying(Predicate<Statement<?>> which, int times) {
		this.faults.add(new Fault(which, new AtomicInteger(times), Kind.WRITE_TIMEOUT_NOT_APPLIED));
	}

	/**
	 * @param table a table name without keyspace, such as {@code events_by_tag}
	 * @return matches inserts and updates into that table, alone or in a batch (not a longer name that
	 * starts with it: {@code events} does not match {@code events_by_tag})
	 */
	public static Predicate<Statement<?>> writesTo(String table) {
		Pattern pattern = Pattern.compile("(?i)(INSERT INTO|UPDATE) (\\w+\\.)?" + Pattern.quote(table) + "\\b");
		return (s) -> pattern.matcher(cql(s)).find();
	}

	/** @return matches lightweight transactions (claims, releases, conditional saves) */
	public static Predicate<Statement<?>> lightweightTransactions() {
		return (s) -> isConditional(cql(s));
	}

	/**
	 * @param fragment text the statement's CQL contains
	 * @return matches statements (or batches holding one) whose CQL contains {@code fragment}
	 */
	public static Predicate<Statement<?>> cqlContaining(String fragment) {
		return (s) -> cql(s).contains(fragment);
	}

	/**
	 * @param statement a simple, bound or batch statement
	 * @return its CQL text; a batch's statements joined by new lines
	 */
	public static String cql(Statement<?> statement) {
		if (statement instanceof SimpleStatement simple) {
			return simple.getQuery();
		}
		if (statement instanceof BoundStatement bound) {
			return bound.getPreparedStatement().getQuery();
		}
		if (statement instanceof BatchStatement batch) {
			StringBuilder text = new StringBuilder();
			for (BatchableStatement<?> inner : batch) {
				text.append(cql(inner)).append('\n');
			}
			return text.toString();
		}
		return "";
	}

	private static boolean isConditional(String cql) {
		return cql.contains(" IF ");
	}

	private @org.jspecify.annotations.Nullable CompletionStage<?> injectCounted(Statement<?> statement) {
		for (Fault fault : this.faults) {
			if (fault.which().test(statement) && fault.remaining().getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
				this.injected.incrementAndGet();
				return switch (fault.kind()) {
					case BEFORE_SENDING -> CompletableFuture.failedFuture(new NoNodeAvailableException());
					case APPLY_THEN_WRITE_TIMEOUT -> applyThenFail(statement, writeTimeout(statement));
					case APPLY_THEN_DRIVER_TIMEOUT -> applyThenFail(statement,
							new DriverTimeoutException("injected: applied, then no answer within the request timeout"));
					case WRITE_TIMEOUT_NOT_APPLIED -> CompletableFuture.failedFuture(writeTimeout(statement));
					case APPLY_THEN_RESEND -> this.delegate.executeAsync(statement)
						.thenCompose((first) -> this.delegate.executeAsync(statement));
				};
			}
		}
		return null;
	}

	private CompletionStage<?> applyThenFail(Statement<?> statement, RuntimeException failure) {
		return this.delegate.executeAsync(statement).handle((rs, error) -> {
			throw (error != null) ? new java.util.concurrent.CompletionException(error)
					: new java.util.concurrent.CompletionException(failure);
		});
	}

	private WriteTimeoutException writeTimeout(Statement<?> statement) {
		Node coordinator = this.delegate.getMetadata().getNodes().values().iterator().next();
		String cql = cql(statement);
		WriteType type;
		ConsistencyLevel level = statement.getConsistencyLevel();
		if (isConditional(cql)) {
			type = WriteType.CAS;
			level = (statement.getSerialConsistencyLevel() != null) ? statement.getSerialConsistencyLevel()
					: DefaultConsistencyLevel.SERIAL;
		}
		else if (statement instanceof BatchStatement batch) {
			type = (batch.getBatchType() == com.datastax.oss.driver.api.core.cql.DefaultBatchType.LOGGED) ? WriteType.BATCH
					: WriteType.UNLOGGED_BATCH;
		}
		else {
			type = WriteType.SIMPLE;
		}
		return new WriteTimeoutException(coordinator, (level != null) ? level : DefaultConsistencyLevel.LOCAL_QUORUM, 0,
				1, type);
	}

	/** Faults that apply a statement, let something else happen, then fail it: tried before the counted ones. */
	private final List<StagedFault> staged = new CopyOnWriteArrayList<>();

	/** A null failure: the statement's own answer, held until {@code meanwhile} completes. */
	private record StagedFault(Predicate<Statement<?>> which, AtomicInteger remaining,
			Supplier<? extends CompletionStage<?>> meanwhile,
			@org.jspecify.annotations.Nullable Function<Statement<?>, ? extends RuntimeException> failure) {
	}

	/**
	 * Executes the next {@code times} matching statements on the real node; once each has completed, starts
	 * {@code meanwhile} (another writer's append, say) and waits for it; then fails the statement with
	 * {@code failure} instead of its result. Shows the caller a write that applied, followed by other writes it
	 * did not see, before its answer came back.
	 * @param which the statements to apply and then fail
	 * @param times how many of them
	 * @param meanwhile what happens between the statement's execution and its (failed) answer
	 * @param failure the error the caller sees, from the statement
	 */
	public void applyThenFail(Predicate<Statement<?>> which, int times, Supplier<? extends CompletionStage<?>> meanwhile,
			Function<Statement<?>, ? extends RuntimeException> failure) {
		this.staged.add(new StagedFault(which, new AtomicInteger(times), meanwhile, failure));
	}

	/**
	 * As {@link #applyThenTimeOut}, with {@code meanwhile} run after the statement applied and before its
	 * timeout is reported.
	 * @param which the statements to apply and then fail
	 * @param times how many of them
	 * @param meanwhile what happens between the statement's execution and its timeout
	 */
	public void applyThenTimeOut(Predicate<Statement<?>> which, int times,
			Supplier<? extends CompletionStage<?>> meanwhile) {
		applyThenFail(which, times, meanwhile, this::writeTimeout);
	}

	/**
	 * A connection lost while the coordinator is still working (finding 20 of docs/reliability.md): the next
	 * {@code times} statements matching {@code which} fail at once with {@code failure} (a
	 * {@link ClosedConnectionException} "Unexpected error on channel", say), and each is really executed on the node
	 * only later: as soon as a statement matching {@code after} has completed, or {@code atMost} after the failure,
	 * whichever comes first. A Paxos round held like this applies after the caller heard of its failure, as a
	 * coordinator still inside its contention loop does (Cassandra bounds that by {@code cas_contention_timeout} and
	 * {@code write_request_timeout} from the request's start).
	 * @param which the statements to fail and apply later
	 * @param times how many of them
	 * @param after statements whose completion releases the held ones (the caller's serial read, say)
	 * @param atMost the longest a held statement waits
	 * @param failure the error the caller sees at once
	 * @return completes once every held statement was executed on the node, whatever its outcome (for tests to
	 * wait on)
	 */
	public CompletableFuture<Void> failThenApplyLater(Predicate<Statement<?>> which, int times,
			Predicate<Statement<?>> after, java.time.Duration atMost, Supplier<? extends RuntimeException> failure) {
		CompletableFuture<Void> applied = new CompletableFuture<>();
		AtomicInteger pending = new AtomicInteger(times);
		this.lostConnections.add(new LostConnection(which, new AtomicInteger(times), after, atMost, failure, applied,
				pending, new CopyOnWriteArrayList<>()));
		return applied;
	}

	/**
	 * Fails the next {@code times} statements matching {@code which} at once with {@code failure} and never sends
	 * them: a connection lost before the request reached the node, which the caller cannot tell from one lost
	 * while the node was working on it.
	 * @param which the statements to fail
	 * @param times how many of them
	 * @param failure the error the caller sees
	 */
	public void loseConnectionBeforeSending(Predicate<Statement<?>> which, int times,
			Supplier<? extends RuntimeException> failure) {
		this.lostConnections.add(new LostConnection(which, new AtomicInteger(times), (s) -> false, null, failure,
				new CompletableFuture<>(), new AtomicInteger(times), new CopyOnWriteArrayList<>()));
	}

	/** The error a request in flight gets when its connection fails (a frame the driver could not decode, say). */
	public static ClosedConnectionException connectionLost() {
		return new ClosedConnectionException("Unexpected error on channel",
				new IllegalArgumentException("injected: Unsupported request opcode: 0 in protocol 0"));
	}

	private final List<LostConnection> lostConnections = new CopyOnWriteArrayList<>();

	/** A null {@code atMost}: never sent. */
	private record LostConnection(Predicate<Statement<?>> which, AtomicInteger remaining, Predicate<Statement<?>> after,
			java.time.@org.jspecify.annotations.Nullable Duration atMost, Supplier<? extends RuntimeException> failure,
			CompletableFuture<Void> applied, AtomicInteger pending, List<CompletableFuture<Void>> releases) {
	}

	private @org.jspecify.annotations.Nullable CompletionStage<?> injectLostConnection(Statement<?> statement) {
		for (LostConnection lost : this.lostConnections) {
			if (lost.which().test(statement) && lost.remaining().getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
				this.injected.incrementAndGet();
				if (lost.atMost() == null) {
					return CompletableFuture.failedFuture(lost.failure().get());
				}
				CompletableFuture<Void> release = new CompletableFuture<>();
				lost.releases().add(release);
				release.completeOnTimeout(null, lost.atMost().toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)
					.thenCompose((ignored) -> this.delegate.executeAsync(statement))
					.whenComplete((rs, error) -> {
						if (lost.pending().decrementAndGet() == 0) {
							lost.applied().complete(null);
						}
					});
				return CompletableFuture.failedFuture(lost.failure().get());
			}
		}
		return null;
	}

	/** Releases statements held by {@link #failThenApplyLater} once a statement they wait for completed. */
	private CompletionStage<?> releaseAfter(Statement<?> statement, CompletionStage<?> running) {
		List<CompletableFuture<Void>> waiting = new java.util.ArrayList<>();
		for (LostConnection lost : this.lostConnections) {
			if (lost.after().test(statement)) {
				waiting.addAll(lost.releases());
			}
		}
		if (waiting.isEmpty()) {
			return running;
		}
		return running.whenComplete((rs, error) -> waiting.forEach((release) -> release.complete(null)));
	}

	/**
	 * @param statement a statement
	 * @return the {@link UnavailableException} a coordinator returns when it finds too few replicas alive for
	 * the statement's consistency level (for a lightweight transaction Cassandra checks this again in the commit
	 * phase, after a quorum accepted the proposal)
	 */
	public UnavailableException unavailable(Statement<?> statement) {
		Node coordinator = this.delegate.getMetadata().getNodes().values().iterator().next();
		return new UnavailableException(coordinator, DefaultConsistencyLevel.LOCAL_QUORUM, 2, 1);
	}

	private @org.jspecify.annotations.Nullable CompletionStage<?> injectStaged(Statement<?> statement) {
		for (StagedFault fault : this.staged) {
			if (fault.which().test(statement) && fault.remaining().getAndUpdate((n) -> Math.max(0, n - 1)) > 0) {
				this.injected.incrementAndGet();
				if (fault.failure() == null) {
					// Answered late, not failed.
					return this.delegate.executeAsync(statement)
						.thenCompose((answer) -> fault.meanwhile().get().thenApply((ignored) -> answer));
				}
				return this.delegate.executeAsync(statement)
					.thenCompose((applied) -> fault.meanwhile().get().thenApply((done) -> (Object) done))
					.handle((ignored, error) -> {
						throw new java.util.concurrent.CompletionException(
								(error != null) ? error : fault.failure().apply(statement));
					});
			}
		}
		return null;
	}

}
