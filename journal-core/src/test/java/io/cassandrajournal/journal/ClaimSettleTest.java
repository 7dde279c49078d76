package io.cassandrajournal.journal;

import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.NodeUnavailableException;
import com.datastax.oss.driver.api.core.connection.ClosedConnectionException;
import com.datastax.oss.driver.api.core.connection.CrcMismatchException;
import com.datastax.oss.driver.api.core.connection.HeartbeatException;
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
 * apply (never sent: no read needed).
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

}
