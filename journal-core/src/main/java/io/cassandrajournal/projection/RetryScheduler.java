package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

/**
 * Waits between retries. The default waits in real time; tests pass one that records the delays and
 * completes at once, so backoff is checked without sleeping.
 */
@FunctionalInterface
public interface RetryScheduler {

	/** Waits in real time. */
	RetryScheduler REAL_TIME = (delay) -> CompletableFuture.supplyAsync(() -> null,
			CompletableFuture.delayedExecutor(delay.toMillis(), TimeUnit.MILLISECONDS));

	/**
	 * @param delay how long to wait
	 * @return completes after the delay
	 */
	CompletionStage<Void> after(Duration delay);

}
