package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.query.TagOffset;

/**
 * The stored cursor of a fan-out entity whose projection could not be created, read once without blocking, and the
 * FAILED status it shows: at its stored cursor (where it resumes once created) when read, else at
 * {@link TagOffset#START} with an error that says the cursor is being read or could not be read (it is not the
 * beginning). Where this fits: {@link FailedFanOutEntity} (a fan-out without sharing) and {@link FanOutSegment} (a
 * shared fan-out's segment) make one for each entity that fails (finding 32).
 */
final class FailedEntityCursor {

	private static final Logger logger = LoggerFactory.getLogger(FailedEntityCursor.class);

	/** How long the read may take before the cursor is reported unknown (as the blocking read it replaces). */
	static final Duration READ_BOUND = Duration.ofSeconds(5);

	private final ProjectionId id;

	private final String error;

	/** The stored cursor ({@link TagOffset#START} when none is stored) once read; {@code null} until then. */
	private volatile @Nullable TagOffset stored;

	/** Why {@link #stored} is not known: it is being read, or the read failed. */
	private volatile String unknown = "its stored cursor is being read";

	private FailedEntityCursor(ProjectionId id, String error) {
		this.id = id;
		this.error = error;
	}

	/**
	 * Starts the read and returns at once; the status shows the cursor once the read has answered.
	 * @param id the entity's projection identity
	 * @param error why its projection could not be created
	 * @param read reads its stored cursor (it must not touch what an offset store tracks for a runner's saves)
	 * @return the entity's failure, its cursor being read
	 */
	static FailedEntityCursor read(ProjectionId id, String error,
			Supplier<? extends CompletionStage<Optional<TagOffset>>> read) {
		FailedEntityCursor cursor = new FailedEntityCursor(id, error);
		CompletableFuture<Optional<TagOffset>> reading;
		try {
			// A copy: the bound below completes the future it is set on, which may be the store's own.
			reading = read.get().toCompletableFuture().copy();
		}
		catch (Exception | Error ex) {
			// An Error too (a StackOverflowError in the store's code): thrown on, it would fail the segment's take or
			// the discovery batch for one entity's status.
			if (Errors.fatal(ex)) {
				throw ex;
			}
			reading = CompletableFuture.failedFuture(ex);
		}
		reading.orTimeout(READ_BOUND.toMillis(), TimeUnit.MILLISECONDS).whenComplete((stored, failure) -> {
			if (failure == null) {
				cursor.stored = stored.orElse(TagOffset.START);
			}
			else {
				cursor.unknown = "its stored cursor could not be read";
				logger.warn("Projection {}: reading its stored cursor failed", id, Errors.unwrap(failure));
			}
		});
		return cursor;
	}

	/**
	 * @return FAILED with the error, at the stored cursor when it was read; else at {@link TagOffset#START}, the error
	 * saying that the cursor is being read or could not be read and that the entity resumes from it
	 */
	ProjectionStatus status() {
		TagOffset offset = this.stored;
		return new ProjectionStatus(this.id, ProjectionState.FAILED, (offset != null) ? offset : TagOffset.START, 0, 0,
				null, Duration.ZERO, 0, (offset != null) ? this.error
						: this.error + " (" + this.unknown + ": it resumes from it, not from the start)");
	}

}
