package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.query.TagOffset;

/** A segment runner that reads nothing: RUNNING until stopped. For tests of the lease machinery alone. */
final class IdleSegmentRunner implements SegmentRunner {

	private final ProjectionId id;

	private volatile ProjectionState state = ProjectionState.RUNNING;

	IdleSegmentRunner(ProjectionId id) {
		this.id = id;
	}

	@Override
	public ProjectionId id() {
		return this.id;
	}

	@Override
	public ProjectionStatus status() {
		return new ProjectionStatus(this.id, this.state, TagOffset.START, 0, 0, null, Duration.ZERO, 0, null);
	}

	@Override
	public CompletionStage<Void> start() {
		this.state = ProjectionState.RUNNING;
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletionStage<Void> stop() {
		this.state = ProjectionState.STOPPED;
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletionStage<Void> retire() {
		return stop();
	}

	@Override
	public void pause() {
		this.state = ProjectionState.PAUSED;
	}

	@Override
	public void resume() {
		this.state = ProjectionState.RUNNING;
	}

	@Override
	public CompletionStage<Void> reset(TagOffset offset) {
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public void skipCurrent() {
	}

	@Override
	public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
		return CompletableFuture.completedFuture(List.of());
	}

	@Override
	public CompletionStage<Integer> redeliverDeadLetters() {
		return CompletableFuture.completedFuture(0);
	}

	@Override
	public void wake(AppendResult result) {
	}

}
