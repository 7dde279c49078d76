package io.cassandrajournal.projection;

import java.io.Serial;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import io.cassandrajournal.internal.Errors;

/**
 * A reset asked for while another reset of the same projection (or fan-out entity) runs: refused, and the running
 * reset goes on. A refusal says nothing about the projection's health, so a shared segment is not released for it
 * (docs/reliability.md, finding 29). Callers of {@link ProjectionControl#reset} see it as the failure of the
 * returned stage; it is an {@link IllegalStateException}, and the actuator answers it with 409 Conflict.
 */
public final class ResetInProgressException extends IllegalStateException {

	@Serial
	private static final long serialVersionUID = 1L;

	ResetInProgressException(String message) {
		super(message);
	}

	/** @return whether a reset failed only because another reset ran */
	static boolean isRefusal(Throwable error) {
		return Errors.unwrap(error) instanceof ResetInProgressException;
	}

	/**
	 * Waits for the resets of several runners (segments, or a segment's entities).
	 * @param each the resets
	 * @return completes when all have ended; if any failed, with the first failure that is not a refusal, so that
	 * a real failure is never hidden behind another runner's refusal (else with a refusal)
	 */
	static CompletableFuture<Void> allOf(List<CompletableFuture<Void>> each) {
		return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new))
			.exceptionallyCompose((error) -> CompletableFuture.failedFuture(worst(each, error)));
	}

	/**
	 * The failure to report for resets of several runners that have all ended, one or more of them failed: the
	 * first that is not a refusal.
	 * @param each the resets, all ended
	 * @param fallback what {@link CompletableFuture#allOf} reported
	 * @return the failure to report
	 */
	static Throwable worst(List<CompletableFuture<Void>> each, Throwable fallback) {
		for (CompletableFuture<Void> reset : each) {
			if (reset.isCompletedExceptionally()) {
				Throwable error = reset.handle((ok, e) -> e).join();
				if (error != null && !isRefusal(error)) {
					return Errors.unwrap(error);
				}
			}
		}
		return Errors.unwrap(fallback);
	}

}
