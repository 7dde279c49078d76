package io.cassandrajournal.projection;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagOffset;

/**
 * An entity of a fan-out without sharing whose projection could not be created (the user's handler factory
 * threw): registered under the entity's projection name so that it shows FAILED with the error, it has no runner,
 * no cursor moves and no event is handled. Its status shows the stored cursor it will resume from (once read: the
 * read holds no thread, {@link FailedEntityCursor}) and its dead letters are the ones stored under its name. Its {@link #start()} (also by {@code startAll})
 * tries to create the projection again, which then replaces it in the engine; from then on this handle (which a
 * caller may still hold) passes every call to its replacement. Where this fits: {@link ProjectionEngine#fanOut}
 * registers one instead of stopping its discovery at the failing entity.
 */
final class FailedFanOutEntity implements ProjectionControl {

	private final ProjectionId id;

	private final String error;

	/** Where it resumes from once created (its stored cursor), as far as read. */
	private final FailedEntityCursor stored;

	private final @Nullable DeadLetterQueue deadLetters;

	/** Creates the entity's projection again and registers it (or another failed entity) in place of this one. */
	private final Function<FailedFanOutEntity, CompletionStage<Void>> retry;

	/** What replaced this control in the engine after a retry: every call goes to it. */
	private volatile @Nullable ProjectionControl replacement;

	/**
	 * @param id the entity's projection identity
	 * @param error why its projection could not be created
	 * @param stored its stored cursor, being read
	 * @param deadLetters the engine's dead-letter queue, if any
	 * @param retry creates the entity's projection again, calls {@link #replacedBy} with what now stands for it
	 */
	FailedFanOutEntity(ProjectionId id, String error, FailedEntityCursor stored,
			@Nullable DeadLetterQueue deadLetters, Function<FailedFanOutEntity, CompletionStage<Void>> retry) {
		this.id = id;
		this.error = error;
		this.stored = stored;
		this.deadLetters = deadLetters;
		this.retry = retry;
	}

	/** @param control what replaced this control in the engine (the entity's projection, or a new failed entity) */
	void replacedBy(ProjectionControl control) {
		this.replacement = control;
	}

	@Override
	public ProjectionId id() {
		return this.id;
	}

	/**
	 * FAILED with the error, resuming from the stored cursor; while that is being read, or when it could not be read,
	 * the offset is {@link TagOffset#START} and the error says that the cursor is unknown (it is not the beginning).
	 */
	@Override
	public ProjectionStatus status() {
		ProjectionControl now = this.replacement;
		return (now != null) ? now.status() : this.stored.status();
	}

	/**
	 * Creates the entity's projection again (one attempt at a time per handle).
	 * @return completes when it was created again and runs; fails with the error when it could not be (it stays
	 * FAILED) or when the engine stopped meanwhile
	 */
	@Override
	public synchronized CompletionStage<Void> start() {
		ProjectionControl now = this.replacement;
		return (now != null) ? now.start() : this.retry.apply(this);
	}

	@Override
	public CompletionStage<Void> stop() {
		ProjectionControl now = this.replacement;
		return (now != null) ? now.stop() : CompletableFuture.completedFuture(null);
	}

	@Override
	public void pause() {
		ProjectionControl now = this.replacement;
		if (now != null) {
			now.pause();
		}
	}

	@Override
	public void resume() {
		ProjectionControl now = this.replacement;
		if (now != null) {
			now.resume();
		}
	}

	/** Refused: there is no runner to reset; {@link #start()} creates it from its stored cursor. */
	@Override
	public CompletionStage<Void> reset(TagOffset offset) {
		ProjectionControl now = this.replacement;
		return (now != null) ? now.reset(offset) : refused("reset it");
	}

	@Override
	public void skipCurrent() {
		ProjectionControl now = this.replacement;
		if (now != null) {
			now.skipCurrent();
		}
	}

	/** The letters stored under the entity's projection name (parked by an earlier run). */
	@Override
	public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
		ProjectionControl now = this.replacement;
		if (now != null) {
			return now.deadLetters(limit);
		}
		return (this.deadLetters != null) ? this.deadLetters.list(this.id.name(), limit)
				: CompletableFuture.completedFuture(List.of());
	}

	/** Refused: there is no handler to hand its letters to; they stay stored. */
	@Override
	public CompletionStage<Integer> redeliverDeadLetters() {
		ProjectionControl now = this.replacement;
		return (now != null) ? now.redeliverDeadLetters() : refused("redeliver its dead letters");
	}

	private <T> CompletionStage<T> refused(String action) {
		return CompletableFuture.failedFuture(new IllegalStateException("projection " + this.id + " could not be "
				+ "created (" + this.error + "): start it to try again, then " + action));
	}

}
