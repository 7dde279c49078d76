package io.cassandrajournal.projection;

import java.time.Instant;
import java.util.Set;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.journal.PersistentEvent;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RunState}'s transitions on plain events: no Cassandra, no threads.
 */
class RunStateTest {

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final RunState run = new RunState(new ProjectionMetrics(this.meters, "view"));

	private static PersistentEvent<String> event(String persistenceId, long sequenceNr) {
		return new PersistentEvent<>(persistenceId, sequenceNr, Instant.EPOCH, Set.of(), "\"x\"");
	}

	private double stalled() {
		return this.meters.get("persistence.projection.stalled").gauge().value();
	}

	@Test
	void aStartOfAnActiveProjectionDoesNothing() {
		assertThat(this.run.start()).isPositive();
		assertThat(this.run.start()).isEqualTo(-1);
		assertThat(this.run.state()).isEqualTo(ProjectionState.RUNNING);
	}

	@Test
	void aStopMakesTheBatchAndTheStartOfTheOldGenerationStale() {
		long started = this.run.start();
		this.run.batchStarted();
		assertThat(this.run.batchGoesOn()).isTrue();

		this.run.stop();
		long again = this.run.start();

		assertThat(this.run.batchGoesOn()).isFalse();
		assertThat(this.run.current(started)).isFalse();
		assertThat(this.run.current(again)).isTrue();
	}

	@Test
	void aFailedProjectionStaysFailedWhenStopped() {
		this.run.start();
		assertThat(this.run.fail("stopped at a#1: boom", event("a", 1))).isTrue();
		assertThat(this.run.fail("stopped at b#1: boom", event("b", 1))).as("the first lane to stop names it").isFalse();

		this.run.stop();

		assertThat(this.run.state()).isEqualTo(ProjectionState.FAILED);
		assertThat(this.run.lastError()).isEqualTo("stopped at a#1: boom");
		assertThat(stalled()).isEqualTo(1.0);
	}

	// Hole 6: a success in one lane does not end another lane's failure series.
	@Test
	void theFailureSeriesEndsWhenTheLastFailingEventSettles() {
		this.run.start();
		assertThat(this.run.eventFailed(event("a", 1), true, "a#1: boom")).as("series starts").isTrue();
		assertThat(this.run.eventFailed(event("b", 1), true, "b#1: boom")).isFalse();

		assertThat(this.run.eventSettled(event("b", 2))).isFalse();
		assertThat(this.run.eventSettled(event("b", 1))).isFalse();
		assertThat(this.run.state()).isEqualTo(ProjectionState.FAILING);
		assertThat(stalled()).isEqualTo(1.0);

		assertThat(this.run.eventSettled(event("a", 1))).isTrue();
		assertThat(this.run.state()).isEqualTo(ProjectionState.RUNNING);
		assertThat(stalled()).isZero();
	}

	// Hole 6: skip during FAILING targets the event that failed first, not another lane's.
	@Test
	void skipTargetsTheFirstFailingEventOrTheOneAFailedProjectionStoppedAt() {
		this.run.start();
		this.run.eventFailed(event("a", 1), true, "a#1: boom");
		this.run.eventFailed(event("b", 1), true, "b#1: boom");

		assertThat(this.run.skip()).isEqualTo(new RunState.Skip("a#1", false));

		this.run.fail("stopped at b#1: boom", event("b", 1));
		assertThat(this.run.skip()).isEqualTo(new RunState.Skip("b#1", true));
		assertThat(this.run.state()).isEqualTo(ProjectionState.STOPPED);
	}

	@Test
	void nothingToSkipWhileNothingFails() {
		this.run.start();
		assertThat(this.run.skip()).isNull();
	}

	@Test
	void theEndOfABatchAbandonsWhatStillFails() {
		this.run.start();
		this.run.eventFailed(event("a", 1), true, "a#1: boom");

		this.run.batchEnded();

		assertThat(this.run.state()).isEqualTo(ProjectionState.RUNNING);
		assertThat(this.run.skip()).isNull();
		assertThat(stalled()).isZero();
	}

	@Test
	void aResumedProjectionIsFailingWhileAnEventStillFails() {
		this.run.start();
		this.run.eventFailed(event("a", 1), true, "a#1: boom");
		assertThat(this.run.pause()).isTrue();
		assertThat(this.run.active()).isFalse();

		assertThat(this.run.resume()).isTrue();

		assertThat(this.run.state()).isEqualTo(ProjectionState.FAILING);
	}

}
