package io.cassandrajournal.projection;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A projection's identity tells its kind and makes the offsets a reset of that kind may store (hole 4:
 * never an offset its source cannot resume from).
 */
class ProjectionIdTest {

	private final ProjectionId byTag = ProjectionId.byTag("view", TagFilter.tag("account"));

	private final ProjectionId byPid = ProjectionId.byPersistenceId("audit", "account-1");

	@Test
	void theIdentityTellsItsKind() {
		assertThat(this.byTag.persistenceId()).isNull();
		assertThat(this.byPid.persistenceId()).isEqualTo("account-1");
		assertThat(this.byPid).isEqualTo(new ProjectionId("audit", "pid:account-1"));
	}

	@Test
	void aByTagProjectionResumesFromATimestamp() {
		assertThat(this.byTag.offsetFromTimestamp(1000)).isEqualTo(new TagOffset(999, "", Long.MAX_VALUE));
		assertThat(this.byTag.offsetFromTimestamp(0)).isEqualTo(new TagOffset(0, "", Long.MAX_VALUE));
		assertThatThrownBy(() -> this.byTag.offsetFromSequenceNr(3)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("reads by tag")
			.hasMessageContaining("fromTimestamp");
		assertThatThrownBy(() -> this.byTag.offsetFromTimestamp(-1)).hasMessageContaining("must not be negative");
	}

	@Test
	void aByPersistenceIdProjectionResumesFromASequenceNumber() {
		assertThat(this.byPid.offsetFromSequenceNr(3)).isEqualTo(new TagOffset(0, "account-1", 2));
		assertThatThrownBy(() -> this.byPid.offsetFromTimestamp(1000)).isInstanceOf(IllegalArgumentException.class)
			.hasMessageContaining("account-1")
			.hasMessageContaining("fromSequenceNr");
		assertThatThrownBy(() -> this.byPid.offsetFromSequenceNr(0)).hasMessageContaining("at least 1");
	}

}
