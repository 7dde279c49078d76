package io.cassandrajournal.testing.faults;

import java.io.IOException;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Application-JVM SIGKILL at seeded points, part of the default verify: four JVMs, each killed after 20 to 300
 * completed operations, then the history check ({@link AppCrashRun}). {@code -Dfaults.seed=N} changes the run.
 */
@CassandraTest
class AppCrashHistoryIT {

	@Test
	void applicationJvmsKilledAtSeededPointsKeepEveryRule(TestKeyspace keyspace, @TempDir Path work)
			throws IOException, InterruptedException {
		long seed = Long.parseLong(System.getProperty("faults.seed", Long.toString(FaultHistoryIT.DEFAULT_SEED)).trim());
		AppCrashRun.Report report = AppCrashRun.run(keyspace.session(), keyspace.name(), keyspace.contactPoints().get(0),
				seed, 4, 300, work);
		System.out.println(report.summary());

		assertThat(report.operations()).as("operations").isGreaterThan(80);
		assertEveryRuleHolds(report);
	}

	static void assertEveryRuleHolds(AppCrashRun.Report report) {
		assertThat(report.checked().violations()).as(report.summary()).allSatisfy((rule, count) -> assertThat(count)
			.as(rule.name())
			.isZero());
	}

}
