package io.cassandrajournal.testing.faults;

import java.time.Duration;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The long fault run: {@code ./mvnw -Pfaults verify -pl journal-core -am -Dfaults.seed=N -Dfaults.duration=900}
 * (15 minutes and a seed taken from the clock unless given). Tagged {@code faults-long}: not in the default verify.
 */
@Tag("faults-long")
@CassandraTest
class FaultHistoryLongIT {

	@Test
	void aLongRunUnderFaultsKeepsEveryRule(TestKeyspace keyspace) throws InterruptedException {
		FaultRun.Settings settings = FaultRun.Settings.fromSystemProperties(System.currentTimeMillis(),
				Duration.ofMinutes(15));
		FaultRun.Report report = new FaultRun(keyspace.session(), keyspace.name(), settings).run();
		System.out.println(report.summary());

		assertThat(report.checked().violations()).as(report.summary()).allSatisfy((rule, count) -> assertThat(count)
			.as(rule.name())
			.isZero());
	}

}
