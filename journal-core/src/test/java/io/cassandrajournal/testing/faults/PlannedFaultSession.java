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
			Decision decision = this.plan.decide(classify(statement));
			if (decision != null) {
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
		return this.delegate.executeAsync(statement);
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
