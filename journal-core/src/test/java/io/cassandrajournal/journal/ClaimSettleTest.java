package io.cassandrajournal.journal;

import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.NodeUnavailableException;
import com.datastax.oss.driver.api.core.connection.ClosedConnectionException;
import com.datastax.oss.driver.api.core.connection.CrcMismatchException;
import com.datastax.oss.driver.api.core.connection.HeartbeatException;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.metadata.Node;
import com.datastax.oss.driver.api.core.servererrors.OverloadedException;
import com.datastax.oss.driver.api.core.servererrors.ReadTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.ServerError;
import com.datastax.oss.driver.api.core.servererrors.UnavailableException;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.WriteType;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How a failed claim is classified before its serial read (docs/reliability.md, finding 20): whether the
 * coordinator answered (it gave up on the round: the read may run at once), and whether the round certainly did not
 * apply (never sent: no read needed); and how long the read waits ({@link AppendWriter#settleWaitNanos}).
 */
class ClaimSettleTest {

	private static final Node NODE_1 = node("node-1");

	private static final Node NODE_2 = node("node-2");

	/** A node for the exceptions' constructors: only its string form is ever used. */
	private static Node node(String name) {
		return (Node) Proxy.newProxyInstance(Node.class.getClassLoader(), new Class<?>[] { Node.class },
				(proxy, method, args) -> switch (method.getName()) {
					case "toString" -> name;
					case "hashCode" -> System.identityHashCode(proxy);
					case "equals" -> proxy == args[0];
					default -> null;
				});
	}

	private record Row(String name, Throwable error, boolean answeredByCoordinator, boolean certainlyNotApplied) {
	}

	private static List<Row> table() {
		return List.of(
				new Row("ClosedConnection", new ClosedConnectionException("Unexpected error on channel"), false, false),
				new Row("Heartbeat", new HeartbeatException(new InetSocketAddress("127.0.0.1", 9042), "heartbeat", null),
						false, false),
				new Row("DriverTimeout", new DriverTimeoutException("Query timed out after PT0.5S"), false, false),
				new Row("CrcMismatch", new CrcMismatchException("CRC mismatch"), false, false),
				new Row("AllNodesFailed of NodeUnavailable only (never sent)",
						AllNodesFailedException.fromErrors(Map.<Node, Throwable>of(NODE_1, new NodeUnavailableException(NODE_1))), false,
						true),
				new Row("WriteTimeout CAS",
						new WriteTimeoutException(NODE_1, DefaultConsistencyLevel.SERIAL, 0, 1, WriteType.CAS), true,
						false),
				new Row("WriteTimeout SIMPLE",
						new WriteTimeoutException(NODE_1, DefaultConsistencyLevel.QUORUM, 0, 1, WriteType.SIMPLE), true,
						false),
				new Row("ReadTimeout", new ReadTimeoutException(NODE_1, DefaultConsistencyLevel.QUORUM, 1, 1, false), true,
						false),
				new Row("Unavailable", new UnavailableException(NODE_1, DefaultConsistencyLevel.QUORUM, 2, 1), true, false),
				new Row("Overloaded", new OverloadedException(NODE_1), true, false),
				new Row("ServerError", new ServerError(NODE_1, "boom"), true, false),
				new Row("AllNodesFailed of coordinator answers",
						AllNodesFailedException.fromErrors(List.of(
								Map.<Node, Throwable>entry(NODE_1, new UnavailableException(NODE_1, DefaultConsistencyLevel.QUORUM, 2, 1)),
								Map.<Node, Throwable>entry(NODE_2,
										new WriteTimeoutException(NODE_2, DefaultConsistencyLevel.SERIAL, 0, 1, WriteType.CAS)))),
						true, false),
				new Row("AllNodesFailed: Unavailable, then a lost connection",
						AllNodesFailedException.fromErrors(List.of(
								Map.<Node, Throwable>entry(NODE_1, new UnavailableException(NODE_1, DefaultConsistencyLevel.QUORUM, 2, 1)),
								Map.<Node, Throwable>entry(NODE_2, new ClosedConnectionException("Unexpected error on channel")))),
						false, false));
	}

	@Test
	void classifiesEachFailureOfAClaim() {
		for (Row row : table()) {
			assertThat(WriteOutcome.answeredByCoordinator(row.error())).as(row.name() + ": answered by its coordinator")
				.isEqualTo(row.answeredByCoordinator());
			assertThat(WriteOutcome.answeredByCoordinator(new CompletionException(row.error())))
				.as(row.name() + ", wrapped: answered by its coordinator")
				.isEqualTo(row.answeredByCoordinator());
			assertThat(WriteOutcome.paxosRoundCertainlyNotApplied(row.error()))
				.as(row.name() + ": Paxos round certainly not applied")
				.isEqualTo(row.certainlyNotApplied());
		}
	}

	private static final Duration SETTLE = Duration.ofSeconds(6);

	private static final long SECOND = Duration.ofSeconds(1).toNanos();

	/** {@code error} as the driver leaves it after earlier attempts failed with {@code earlier}. */
	private static <T extends DriverException> T afterEarlierAttempts(T error,
			Throwable earlier) {
		List<Map.Entry<Node, Throwable>> errors = List.of(Map.entry(NODE_1, earlier));
		error.setExecutionInfo((ExecutionInfo) Proxy.newProxyInstance(ExecutionInfo.class.getClassLoader(),
				new Class<?>[] { ExecutionInfo.class }, (proxy, method, args) -> switch (method.getName()) {
					case "getErrors" -> errors;
					case "toString" -> "execution info";
					case "hashCode" -> System.identityHashCode(proxy);
					case "equals" -> proxy == args[0];
					default -> null;
				}));
		return error;
	}

	@Test
	void waitsTheRestOfTheSettleTimeSinceTheClaimWasSentAfterAFailureItsCoordinatorDidNotAnswer() {
		long sent = 1_000 * SECOND;
		ClosedConnectionException lost = new ClosedConnectionException("Unexpected error on channel");
		assertThat(AppendWriter.settleWaitNanos(sent, sent, lost, SETTLE)).isEqualTo(SETTLE.toNanos());
		assertThat(AppendWriter.settleWaitNanos(sent, sent + 2 * SECOND, lost, SETTLE)).isEqualTo(4 * SECOND);
		assertThat(AppendWriter.settleWaitNanos(sent, sent + 7 * SECOND, lost, SETTLE)).as("never negative").isZero();
		assertThat(AppendWriter.settleWaitNanos(sent, sent + 2 * SECOND,
				new DriverTimeoutException("Query timed out after PT2S"), SETTLE)).isEqualTo(4 * SECOND);
		assertThat(AppendWriter.settleWaitNanos(sent, sent + 2 * SECOND, lost, Duration.ZERO)).isZero();
	}

	@Test
	void waitsNotAtAllAfterTheCoordinatorsAnswer() {
		long sent = 1_000 * SECOND;
		for (Row row : table()) {
			if (row.answeredByCoordinator()) {
				assertThat(AppendWriter.settleWaitNanos(sent, sent, row.error(), SETTLE)).as(row.name()).isZero();
			}
		}
	}

	/**
	 * The driver re-sends even a non-idempotent claim after an unavailable (to the next node) or a read timeout (to
	 * the same node): the attempt that lost its connection may have been sent long after the first, so the whole
	 * settle time is counted from the failure.
	 */
	@Test
	void waitsTheWholeSettleTimeFromNowWhenTheDriverMayHaveSentTheClaimAgain() {
		long sent = 1_000 * SECOND;
		long now = sent + 5 * SECOND;
		ClosedConnectionException afterUnavailable = afterEarlierAttempts(
				new ClosedConnectionException("Unexpected error on channel"),
				new UnavailableException(NODE_1, DefaultConsistencyLevel.QUORUM, 2, 1));
		ClosedConnectionException afterReadTimeout = afterEarlierAttempts(
				new ClosedConnectionException("Unexpected error on channel"),
				new ReadTimeoutException(NODE_1, DefaultConsistencyLevel.QUORUM, 1, 1, false));
		assertThat(AppendWriter.settleWaitNanos(sent, now, afterUnavailable, SETTLE)).isEqualTo(SETTLE.toNanos());
		assertThat(AppendWriter.settleWaitNanos(sent, now, afterReadTimeout, SETTLE)).isEqualTo(SETTLE.toNanos());
		AllNodesFailedException walked = AllNodesFailedException.fromErrors(List.of(
				Map.<Node, Throwable>entry(NODE_1, new UnavailableException(NODE_1, DefaultConsistencyLevel.QUORUM, 2, 1)),
				Map.<Node, Throwable>entry(NODE_2, new ClosedConnectionException("Unexpected error on channel"))));
		assertThat(AppendWriter.settleWaitNanos(sent, now, walked, SETTLE)).isEqualTo(SETTLE.toNanos());
		assertThat(AppendWriter.settleWaitNanos(sent, now, new CompletionException(walked), SETTLE))
			.isEqualTo(SETTLE.toNanos());
		assertThat(AppendWriter.settleWaitNanos(sent, now, new ClosedConnectionException("no earlier attempt"), SETTLE))
			.as("sent once: counted from the send").isEqualTo(SECOND);
	}

}
