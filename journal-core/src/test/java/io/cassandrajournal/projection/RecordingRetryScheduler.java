package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records the backoff delays a projection asks for and continues at once: no sleeping in tests. */
final class RecordingRetryScheduler implements RetryScheduler {

	final List<Duration> delays = new CopyOnWriteArrayList<>();

	@Override
	public CompletionStage<Void> after(Duration delay) {
		this.delays.add(delay);
		return CompletableFuture.completedFuture(null);
	}

}
