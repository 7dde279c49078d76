package io.cassandrajournal.testing;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** Waits for a stage in tests, unwrapping its failure. */
public final class Await {

	private Await() {
	}

	public static <T> T result(CompletionStage<T> stage) {
		return result(stage, Duration.ofSeconds(60));
	}

	public static <T> T result(CompletionStage<T> stage, Duration timeout) {
		try {
			return stage.toCompletableFuture().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (ExecutionException ex) {
			if (ex.getCause() instanceof RuntimeException runtime) {
				throw runtime;
			}
			throw new IllegalStateException(ex.getCause());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		catch (TimeoutException ex) {
			throw new IllegalStateException("stage did not complete within " + timeout, ex);
		}
	}

}
