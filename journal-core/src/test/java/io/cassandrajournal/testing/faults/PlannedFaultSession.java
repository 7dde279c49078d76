package io.cassandrajournal.testing.faults;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.NoNodeAvailableException;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.DefaultBatchType;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.WriteType;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.faults.FaultPlan.Decision;
import io.cassandrajournal.testing.faults.FaultPlan.StatementClass;

/**
 * A real session whose asynchronous statements go through a {@link FaultPlan}: each one is classified
 * (read, plain write, batch, claim, compare-and-set save), the plan decides, and the fault is made the way
 * {@link FaultInjectingSession} makes it (the same driver exceptions and write types Cassandra returns).
 * Synchronous calls (schema set-up) pass untouched.
 */
public final class PlannedFaultSession {

	private final CqlSession delegate;

	private final FaultPlan plan;

	private final String metadataTable;

	private final @Nullable LateWrites lateWrites;

	/** Claim releases sent to the node (after any fault decision let them through), and those that applied. */
	private final java.util.concurrent.atomic.LongAdder releasesSent = new java.util.concurrent.atomic.LongAdder();

	private final java.util.concurrent.atomic.LongAdder releasesApplied = new java.util.concurrent.atomic.LongAdder();

	/**
	 * Batches failed before sending, by their first row's statement (the same object on every attempt of an
	 * append), with the attempts still to fail: the journal's retries of such a batch fail too, as they would
	 * while the node stays unreachable for their 150 ms, so the append fails cleanly and releases its claim.
	 * Without this, three independent 2 % draws almost never fail all attempts and the release path never runs.
	 */
	private final java.util.Map<Object, Integer> unreachable = java.util.Collections
		.synchronizedMap(new java.util.IdentityHashMap<>());

	private final java.util.concurrent.atomic.LongAdder retriesFailed = new java.util.concurrent.atomic.LongAdder();

	/**
	 * @param delegate the real session
	 * @param plan the schedule (shared by every session of a run)
	 * @param metadataTable the journal's metadata table: its lightweight transactions are claims
	 */
	public PlannedFaultSession(CqlSession delegate, FaultPlan plan, String metadataTable) {
		this(delegate, plan, metadataTable, null);
	}

	/**
	 * @param delegate the real session
	 * @param plan the schedule (shared by every session of a run)
	 * @param metadataTable the journal's metadata table: its lightweight transactions are claims
	 * @param lateWrites where to record event rows sent later than {@code in-flight-wait} after their claim
	 */
	PlannedFaultSession(CqlSession delegate, FaultPlan plan, String metadataTable, @Nullable LateWrites lateWrites) {
		this.delegate = delegate;
		this.plan = plan;
		this.metadataTable = metadataTable;
		this.lateWrites = lateWrites;
	}

	public CqlSession session() {
		return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(), new Class<?>[] { CqlSession.class },
				this::invoke);
	}

	/**
	 * @param statement a statement about to be executed
	 * @return what the plan sees it as
	 */
	StatementClass classify(Statement<?> statement) {
		String cql = FaultInjectingSession.cql(statement).stripLeading();
		boolean conditional = cql.contains(" IF ");
		if (conditional) {
			return cql.matches("(?s)(INSERT INTO|UPDATE|DELETE FROM) (\\w+\\.)?" + this.metadataTable + "\\b.*")
					? StatementClass.CLAIM : StatementClass.CAS_SAVE;
		}
		if (statement instanceof BatchStatement) {
			return StatementClass.BATCH;
		}
		return cql.regionMatches(true, 0, "SELECT", 0, 6) ? StatementClass.READ : StatementClass.WRITE;
	}

	private Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
		if (method.getName().equals("executeAsync") && args != null && args.length == 1
				&& args[0] instanceof Statement<?> statement) {
			Object key = (statement instanceof BatchStatement batch && batch.size() > 0) ? batch.iterator().next() : null;
			Integer left = (key != null) ? this.unreachable.get(key) : null;
			if (left != null) {
				if (left > 1) {
					this.unreachable.put(key, left - 1);
				}
				else {
					this.unreachable.remove(key);
				}
				this.retriesFailed.increment();
				return CompletableFuture.failedFuture(new NoNodeAvailableException());
			}
			Decision decision = this.plan.decide(classify(statement));
			if (decision != null) {
				if (key != null && decision.kind() == FaultPlan.Kind.FAIL_BEFORE_SENDING) {
					this.unreachable.put(key, 2);
				}
				return inject(statement, decision);
			}
			return send(statement);
		}
		try {
			return method.invoke(this.delegate, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	/** Hands the statement to the real session now (after any hold), recording it if it is late. */
	private CompletionStage<AsyncResultSet> send(Statement<?> statement) {
		if (this.lateWrites != null) {
			this.lateWrites.sending(statement);
		}
		if (!isRelease(statement)) {
			return this.delegate.executeAsync(statement);
		}
		this.releasesSent.increment();
		return this.delegate.executeAsync(statement).thenApply((rs) -> {
			if (rs.wasApplied()) {
				this.releasesApplied.increment();
			}
			return rs;
		});
	}

	/**
	 * A claim release: the conditional delete of a first claim, or the conditional update of the head back to
	 * the expected number (the claim's statement with a new head below the one it requires).
	 */
	private boolean isRelease(Statement<?> statement) {
		if (!(statement instanceof com.datastax.oss.driver.api.core.cql.BoundStatement bound)
				|| classify(statement) != StatementClass.CLAIM) {
			return false;
		}
		String cql = FaultInjectingSession.cql(statement).stripLeading();
		if (cql.startsWith("DELETE FROM")) {
			return true;
		}
		return cql.startsWith("UPDATE") && cql.contains("IF max_sequence_nr = ?") && bound.size() == 4
				&& bound.getLong(0) < bound.getLong(3);
	}

	/** @return claim releases sent to the node (a fault may still have hit their answer) */
	long releasesSent() {
		return this.releasesSent.sum();
	}

	/** @return retries of batches failed before sending that failed again (not counted by the plan) */
	long retriesFailed() {
		return this.retriesFailed.sum();
	}

	/** @return claim releases the node answered as applied */
	long releasesApplied() {
		return this.releasesApplied.sum();
	}

	private CompletionStage<?> inject(Statement<?> statement, Decision decision) {
		return switch (decision.kind()) {
			case FAIL_BEFORE_SENDING -> CompletableFuture.failedFuture(new NoNodeAvailableException());
			case APPLY_THEN_TIMEOUT_WRITE, APPLY_THEN_TIMEOUT_BATCH, APPLY_THEN_TIMEOUT_CLAIM,
					APPLY_THEN_TIMEOUT_CAS_SAVE ->
				send(statement).handle((rs, error) -> {
					throw new CompletionException((error != null) ? error : writeTimeout(statement));
				});
			case READ_FAILS -> CompletableFuture.failedFuture(new DriverTimeoutException("injected: read timed out"));
			case SLOW_RESPONSE -> send(statement)
				.handle((rs, error) -> CompletableFuture.supplyAsync(() -> null, later(decision.delayMillis()))
					.thenApply((ignored) -> {
						if (error != null) {
							throw new CompletionException(error);
						}
						return rs;
					}))
				.thenCompose((stage) -> stage);
			case LATE_BATCH -> CompletableFuture.supplyAsync(() -> null, later(decision.delayMillis()))
				.thenCompose((ignored) -> send(statement));
			case CONNECTION_LOST_CLAIM -> {
				// The caller hears of the lost connection at once; the round reaches the node later (its outcome is
				// read back by the journal, as after a real lost connection).
				CompletableFuture.supplyAsync(() -> null, later(decision.delayMillis()))
					.thenCompose((ignored) -> send(statement));
				yield CompletableFuture.failedFuture(FaultInjectingSession.connectionLost());
			}
		};
	}

	private static Executor later(long millis) {
		return CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS);
	}

	/** The server-side timeout Cassandra returns for this kind of write. */
	private WriteTimeoutException writeTimeout(Statement<?> statement) {
		Node coordinator = this.delegate.getMetadata().getNodes().values().iterator().next();
		ConsistencyLevel level = statement.getConsistencyLevel();
		WriteType type;
		if (FaultInjectingSession.cql(statement).contains(" IF ")) {
			type = WriteType.CAS;
			level = (statement.getSerialConsistencyLevel() != null) ? statement.getSerialConsistencyLevel()
					: DefaultConsistencyLevel.SERIAL;
		}
		else if (statement instanceof BatchStatement batch) {
			type = (batch.getBatchType() == DefaultBatchType.LOGGED) ? WriteType.BATCH : WriteType.UNLOGGED_BATCH;
		}
		else {
			type = WriteType.SIMPLE;
		}
		return new WriteTimeoutException(coordinator, (level != null) ? level : DefaultConsistencyLevel.LOCAL_QUORUM, 0,
				1, type);
	}

}
