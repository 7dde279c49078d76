package io.cassandrajournal.projection;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Three application JVMs share a projection of 16 segments under continuous appends; one is SIGKILLed every
 * 20 s and restarted, one is SIGSTOPped past its lease and resumed ({@link SharedProjectionRun}). The default
 * verify runs 45 s of it: kills at 20 s and 40 s with the pause between them (the second kill comes as long as
 * the first kill's takeover and the pause are over by 45 s; 34 s in a full verify) ({@code -Dshared.duration=S}
 * changes that; a minute, a third kill of the same kind, until 2026-12-02);
 * {@link SharedProjectionMultiJvmLongIT} runs three minutes or more under {@code -Pfaults}.
 * {@code -Dshared.slice-groups=16} runs either with the segment-aware tag index on (each segment reads only its
 * slice groups' partitions; the run then also checks every tag row has its sliced copy); the default suite runs
 * it off, once.
 */
@CassandraTest
class SharedProjectionMultiJvmIT {

	@Test
	void instancesKilledAndPausedKeepCursorsFencedAndTheReadModelEqualToTheJournal(TestKeyspace keyspace) throws Exception {
		Path work = SharedProjectionRun.workDirectory();
		Duration duration = Duration.ofSeconds(Long.getLong("shared.duration", 45));
		assertRunHolds(SharedProjectionRun.run(keyspace, duration, work), duration);
	}

	static void assertRunHolds(SharedProjectionRun.Report report, Duration duration) {
		assertRunHolds(report, (int) (duration.toSeconds() / 20), duration.toSeconds() * 10);
	}

	/**
	 * @param report the run's report
	 * @param minKills kills the run must have made (one every 20 s unless takeovers are slow)
	 * @param minAppended events it must have appended (a measure of the load)
	 */
	static void assertRunHolds(SharedProjectionRun.Report report, int minKills, long minAppended) {
		System.out.println(report.summary());
		assertThat(report.kills()).as("kills").isGreaterThanOrEqualTo(minKills);
		assertThat(report.appended()).as("events appended").isGreaterThan(minAppended);
		assertThat(report.violations()).as(report.summary()).isEmpty();
		assertThat(report.readModelMatches()).as(report.summary()).isTrue();
		assertThat(report.saves().getOrDefault(SharedProjectionRun.Save.APPLIED, 0L)).as("applied cursor writes")
			.isGreaterThan(0);
		assertThat(report.failovers()).as("failover per kill").hasSize(report.kills());
		// A takeover from a dead owner re-delivers at most the batch it had not saved; hand-overs between live
		// instances (a restarted one taking its share) share the budget and are expected to add little or none.
		assertThat(report.handledTwice()).as(report.summary())
			.isLessThanOrEqualTo((long) SharedProjectionRun.PAGE_SIZE * Math.max(1, report.takenFromDead()));
	}

}
