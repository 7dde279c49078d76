package io.cassandrajournal.testing.faults;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The short seeded run with node faults, part of the default verify: on a node of its own (commit log synced
 * before each acknowledgement), the clients of {@link FaultHistoryIT} run 40 s under the driver-level faults while
 * the node is killed ({@code SIGKILL}) or stopped gracefully and restarted; then the history check.
 * {@code -Dfaults.seed=N} and {@code -Dfaults.duration=SECONDS} change the run.
 */
class NodeFaultHistoryIT {

	@Test
	void aSeededRunWithNodeKillsAndRestartsKeepsEveryRule() throws InterruptedException {
		FaultRun.Settings settings = FaultRun.Settings.fromSystemProperties(FaultHistoryIT.DEFAULT_SEED,
				Duration.ofSeconds(40));
		FaultRun.Report report = NodeFaultRuns.onOwnNode(settings, Duration.ofSeconds(8), Duration.ofSeconds(3));
		System.out.println(report.summary());

		assertThat(report.operationCount()).as("operations").isGreaterThan(100);
		if (settings.duration().compareTo(Duration.ofSeconds(40)) >= 0) {
			assertThat(report.nodeFaults()).as("the node was killed and stopped gracefully")
				.contains("SIGKILL=")
				.contains("GRACEFUL_STOP=");
		}
		NodeFaultRuns.assertRulesHold(report);
	}

}
