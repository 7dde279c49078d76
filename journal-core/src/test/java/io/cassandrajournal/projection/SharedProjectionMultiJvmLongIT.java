package io.cassandrajournal.projection;

import java.nio.file.Path;
import java.time.Duration;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

/**
 * {@link SharedProjectionMultiJvmIT} for {@code -Dshared.duration=S} seconds (default 180: nine SIGKILLs and a
 * SIGSTOP). Tagged {@code faults-long}: runs under {@code -Pfaults} with the other long runs. With
 * {@code -Dshared.slice-groups=16} the instances run with the segment-aware tag index on.
 */
@Tag("faults-long")
@CassandraTest
class SharedProjectionMultiJvmLongIT {

	@Test
	void instancesKilledEveryTwentySecondsForThreeMinutesKeepCursorsFencedAndTheReadModelEqualToTheJournal(
			TestKeyspace keyspace) throws Exception {
		Path work = SharedProjectionRun.workDirectory();
		Duration duration = Duration.ofSeconds(Long.getLong("shared.duration", 180));
		SharedProjectionMultiJvmIT.assertRunHolds(SharedProjectionRun.run(keyspace, duration, work), duration);
	}

}
