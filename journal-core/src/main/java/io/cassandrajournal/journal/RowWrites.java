package io.cassandrajournal.journal;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.internal.Errors;

/**
 * Where this fits: the row writes of one append in {@link AppendWriter} (one logged batch of events and tag
 * index rows, or one events batch per partition and then the tag index rows of each tag; the persistenceId
 * row of a first append, alone before the claim), sent in parallel. Each is idempotent (the same
 * upserts with the same values), so a failed one is sent again, at most {@link #ATTEMPTS} times in all
 * with a short backoff. The outcome says whether any row keyed by a sequence number may exist, which
 * decides whether the claim may be released.
 */
final class RowWrites {

	/** Attempts per write: the first and two retries. */
	static final int ATTEMPTS = 3;

	/** Pause before the first retry; doubled before the next. */
	static final Duration FIRST_BACKOFF = Duration.ofMillis(50);

	private final List<Write> writes = new ArrayList<>();

	/**
	 * @param keyedBySequenceNr whether its rows carry sequence numbers (events, tag index): such a row left
	 * behind by a released claim would collide with the next append's
	 * @param send sends the write; called once per attempt
	 */
	void add(boolean keyedBySequenceNr, Supplier<? extends CompletionStage<?>> send) {
		this.writes.add(new Write(keyedBySequenceNr, send));
	}

	/** @return completes, never exceptionally, once every write succeeded or ran out of attempts */
	CompletionStage<Outcome> run() {
		List<CompletableFuture<Void>> running = new ArrayList<>(this.writes.size());
		for (Write write : this.writes) {
			running.add(write.attempt(1));
		}
		return CompletableFuture.allOf(running.toArray(CompletableFuture[]::new)).thenApply((ignored) -> {
			Throwable failure = null;
			boolean rowsMayExist = false;
			for (Write write : this.writes) {
				failure = (failure != null) ? failure : write.failure;
				rowsMayExist |= write.keyedBySequenceNr && write.mayHaveApplied;
			}
			return new Outcome(failure, rowsMayExist);
		});
	}

	/**
	 * @param failure the final failure of the first write that did not succeed; null when all did
	 * @param rowsMayExist whether a row keyed by a sequence number was written or may have been
	 */
	record Outcome(@Nullable Throwable failure, boolean rowsMayExist) {
	}

	private static final class Write {

		final boolean keyedBySequenceNr;

		final Supplier<? extends CompletionStage<?>> send;

		/** Set once an attempt succeeded or failed in a way that does not exclude it was applied. */
		volatile boolean mayHaveApplied;

		volatile @Nullable Throwable failure;

		Write(boolean keyedBySequenceNr, Supplier<? extends CompletionStage<?>> send) {
			this.keyedBySequenceNr = keyedBySequenceNr;
			this.send = send;
		}

		CompletableFuture<Void> attempt(int attempt) {
			CompletionStage<?> sent;
			try {
				sent = this.send.get();
			}
			catch (RuntimeException ex) {
				sent = CompletableFuture.failedFuture(ex);
			}
			return sent.toCompletableFuture().handle((ok, error) -> {
				if (error == null) {
					this.mayHaveApplied = true;
					this.failure = null;
					return CompletableFuture.<Void>completedFuture(null);
				}
				this.mayHaveApplied |= !WriteOutcome.certainlyNotApplied(error);
				if (attempt < ATTEMPTS && WriteOutcome.retryable(error)) {
					long pause = FIRST_BACKOFF.toMillis() << (attempt - 1);
					return CompletableFuture.runAsync(() -> {
					}, CompletableFuture.delayedExecutor(pause, TimeUnit.MILLISECONDS))
						.thenCompose((ignored) -> attempt(attempt + 1));
				}
				this.failure = Errors.unwrap(error);
				return CompletableFuture.<Void>completedFuture(null);
			}).thenCompose((next) -> next);
		}

	}

}
