package io.cassandrajournal.projection;

/**
 * What a projection does when its handler fails on an event. The cursor never moves past an event until the
 * handler returned or the event was skipped, so a failing handler holds up every later event.
 */
public enum RecoveryStrategy {

	/** Retry {@code maxRetries} times with backoff, then stop the projection (the default). */
	RETRY_AND_FAIL,

	/** Retry {@code maxRetries} times with backoff, then skip the event as a dead letter. */
	RETRY_AND_SKIP,

	/** Stop at once (the handler retries internally). */
	FAIL,

	/** Skip at once as a dead letter (some events are expected to be undeliverable). */
	SKIP;

	/** @return whether failures are retried */
	public boolean retries() {
		return this == RETRY_AND_FAIL || this == RETRY_AND_SKIP;
	}

	/** @return whether the event is finally skipped (otherwise the projection stops) */
	public boolean skipsAtTheEnd() {
		return this == RETRY_AND_SKIP || this == SKIP;
	}

}
