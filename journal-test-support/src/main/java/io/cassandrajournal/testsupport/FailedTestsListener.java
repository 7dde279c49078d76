package io.cassandrajournal.testsupport;

import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;

/**
 * Tells {@link SharedCassandra} which tests and classes of the JVM failed, so that the shared node's log is kept
 * when the JVM exits. Registered through {@code META-INF/services}: it sees every test of the JVM, those that use
 * the node without {@link CassandraTest} (a Spring context on the shared node) and failed {@code @BeforeAll}
 * methods included.
 */
public final class FailedTestsListener implements TestExecutionListener {

	@Override
	public void executionFinished(TestIdentifier testIdentifier, TestExecutionResult testExecutionResult) {
		if (testExecutionResult.getStatus() == TestExecutionResult.Status.FAILED) {
			SharedCassandra.recordFailure(testIdentifier.getUniqueId() + ": "
					+ testExecutionResult.getThrowable().map(FailedTestsListener::firstLine).orElse("failed"));
		}
	}

	private static String firstLine(Throwable failure) {
		String text = failure.toString().lines().findFirst().orElse("");
		return (text.length() > 300) ? text.substring(0, 300) + "..." : text;
	}

}
