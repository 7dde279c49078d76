package io.cassandrajournal.testing.faults;

import java.time.Duration;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The long run with node faults: {@code ./mvnw -Pfaults verify -pl journal-core -am -Dfaults.seed=N
 * -Dfaults.duration=900} (with {@link FaultHistoryLongIT}; 15 minutes and a clock seed unless given). A node of its
 * own is killed or stopped and restarted about every 20 s. Tagged {@code faults-long}: not in the default verify.
 */
@Tag("faults-long")
class NodeFaultHistoryLongIT {

	@Test
	void aLongRunWithNodeKillsAndRestartsKeepsEveryRule() throws InterruptedException {
		FaultRun.Settings settings = FaultRun.Settings.fromSystemProperties(System.currentTimeMillis(),
				Duration.ofMinutes(15));
		FaultRun.Report report = NodeFaultRuns.onOwnNode(settings, Duration.ofSeconds(20), Duration.ofSeconds(10));
		System.out.println(report.summary());

		NodeFaultRuns.assertRulesHold(report);
	}

}
