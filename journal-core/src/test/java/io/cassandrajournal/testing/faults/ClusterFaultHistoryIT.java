package io.cassandrajournal.testing.faults;

import java.time.Duration;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The fault run on a 3-node cluster of its own with replication factor 3, appends at LOCAL_QUORUM and claims at
 * LOCAL_SERIAL: one node at a time (every other time the coordinator the driver just used for a contended entity)
 * is killed or stopped and restarted while the clients run; nothing acknowledged may be lost. Tagged
 * {@code cluster}: {@code ./mvnw -Pcluster-tests verify -pl journal-core -am -Dit.test=ClusterFaultHistoryIT}
 * ({@code -Dfaults.seed}, {@code -Dfaults.duration}; 3 minutes unless given).
 */
@Tag("cluster")
class ClusterFaultHistoryIT {

	@Test
	void aSeededRunOnAClusterWithNodeKillsKeepsEveryRule() throws InterruptedException {
		FaultRun.Settings settings = FaultRun.Settings.fromSystemProperties(FaultHistoryIT.DEFAULT_SEED,
				Duration.ofMinutes(3));
		FaultRun.Report report = NodeFaultRuns.onCluster(settings, Duration.ofSeconds(15), Duration.ofSeconds(5));
		System.out.println(report.summary());

		assertThat(report.nodeFaults()).as("a node was stopped at least once").doesNotContain("{}");
		NodeFaultRuns.assertRulesHold(report);
	}

}
