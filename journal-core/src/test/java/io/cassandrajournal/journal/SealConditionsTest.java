package io.cassandrajournal.journal;

import java.util.EnumSet;
import java.util.Set;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.internal.SealConditions;

import static org.assertj.core.api.Assertions.assertThat;

/** Which consistency levels let a reader seal crash gaps (docs/reliability.md, finding 15, item 2). */
class SealConditionsTest {

	@Test
	void onlyQuorumClassLevelsOverlap() {
		Set<DefaultConsistencyLevel> overlapping = EnumSet.noneOf(DefaultConsistencyLevel.class);
		for (DefaultConsistencyLevel level : DefaultConsistencyLevel.values()) {
			if (!level.isSerial() && SealConditions.overlapping(level)) {
				overlapping.add(level);
			}
		}
		assertThat(overlapping).containsExactlyInAnyOrder(DefaultConsistencyLevel.QUORUM,
				DefaultConsistencyLevel.LOCAL_QUORUM, DefaultConsistencyLevel.EACH_QUORUM, DefaultConsistencyLevel.ALL);
	}

}
