package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import io.cassandrajournal.query.TagOffset;

/**
 * An entity of a fan-out without sharing whose projection could not be created (the user's handler factory
 * threw): registered under the entity's projection name so that it shows FAILED with the error, it has no runner,
 * no cursor moves and no event is handled. Its {@link #start()} (also by {@code startAll}) tries to create the
 * projection again, which then replaces it. Where this fits: {@link ProjectionEngine#fanOut} registers one instead of
 * stopping its discovery at the failing entity.
 */
final class FailedFanOutEntity implements ProjectionControl {

	private final ProjectionId id;

	private final String error;

	/** Takes this control out and creates the entity's projection again. */
	private final Function<FailedFanOutEntity, CompletionStage<Void>> retry;

	/**
	 * @param id the entity's projection identity
	 * @param error why its projection could not be created
	 * @param retry unregisters the given control and creates the entity's projection again
	 */
	FailedFanOutEntity(ProjectionId id, String error, Function<FailedFanOutEntity, CompletionStage<Void>> retry) {
		this.id = id;
		this.error = error;
		this.retry = retry;
	}

	@Override
	public ProjectionId id() {
		return this.id;
	}

	@Override
	public ProjectionStatus status() {
		return new ProjectionStatus(this.id, ProjectionState.FAILED, TagOffset.START, 0, 0, null, Duration.ZERO, 0,
				this.error);
	}

	/** @return completes when the entity's projection was created again and runs, or failed to be created again */
	@Override
	public CompletionStage<Void> start() {
		return this.retry.apply(this);
	}

	@Override
	public CompletionStage<Void> stop() {
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public void pause() {
	}

	@Override
	public void resume() {
	}

	/** Refused: there is no runner to reset; {@link #start()} creates it from its stored cursor. */
	@Override
	public CompletionStage<Void> reset(TagOffset offset) {
		return CompletableFuture.failedFuture(new IllegalStateException("projection " + this.id + " could not be "
				+ "created (" + this.error + "): start it to try again, then reset it"));
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

}
