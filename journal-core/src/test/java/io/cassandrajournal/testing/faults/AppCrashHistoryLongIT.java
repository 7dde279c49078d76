package io.cassandrajournal.testing.faults;

import java.io.IOException;
import java.nio.file.Path;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

/**
 * Application-JVM SIGKILL, long: {@code -Dfaults.jvm-rounds} JVMs (default 20), each killed after 20 to 2,000
 * completed operations, with a clock seed unless {@code -Dfaults.seed} is given. Tagged {@code faults-long}: runs
 * under {@code -Pfaults} with the other long runs.
 */
@Tag("faults-long")
@CassandraTest
class AppCrashHistoryLongIT {

	@Test
	void manyApplicationJvmsKilledAtSeededPointsKeepEveryRule(TestKeyspace keyspace, @TempDir Path work)
			throws IOException, InterruptedException {
		String seedProperty = System.getProperty("faults.seed", "");
		long seed = seedProperty.isBlank() ? System.currentTimeMillis() : Long.parseLong(seedProperty.trim());
		int rounds = Integer.getInteger("faults.jvm-rounds", 20);
		AppCrashRun.Report report = AppCrashRun.run(keyspace.session(), keyspace.name(), keyspace.contactPoints().get(0),
				seed, rounds, 2000, work);
		System.out.println(report.summary());

		AppCrashHistoryIT.assertEveryRuleHolds(report);
	}

}
