package io.cassandrajournal.internal;

import java.util.ArrayList;
import java.util.List;

import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * The argument checks every journal implementation makes before it writes anything, and the payload
 * serialization that must succeed for all events before the first is stored.
 */
public final class AppendValidation {

	private AppendValidation() {
	}

	/**
	 * Runs argument checks for an async operation.
	 * @param <T> the operation's result type
	 * @param checks the checks, throwing on bad input
	 * @return a stage failed with the checks' exception, or {@code null} when they pass
	 */
	public static <T> java.util.concurrent.@org.jspecify.annotations.Nullable CompletionStage<T> failure(Runnable checks) {
		try {
			checks.run();
			return null;
		}
		catch (RuntimeException ex) {
			return java.util.concurrent.CompletableFuture.failedFuture(ex);
		}
	}

	public static void checkPersistenceId(String persistenceId) {
		if (persistenceId == null || persistenceId.isBlank()) {
			throw new IllegalArgumentException("persistenceId must not be blank");
		}
	}

	public static List<String> check(String persistenceId, long expectedSequenceNr, List<EventToAppend> events,
			EventSerializer serializer) {
		checkPersistenceId(persistenceId);
		if (expectedSequenceNr < 0) {
			throw new IllegalArgumentException("expectedSequenceNr must be 0 or more, was " + expectedSequenceNr
					+ " (persistenceId '" + persistenceId + "')");
		}
		if (events == null || events.isEmpty()) {
			throw new IllegalArgumentException("events must not be empty (persistenceId '" + persistenceId + "')");
		}
		List<String> payloads = new ArrayList<>(events.size());
		for (EventToAppend event : events) {
			if (event == null) {
				throw new IllegalArgumentException("events must not contain null (persistenceId '" + persistenceId + "')");
			}
			payloads.add(serializer.serialize(event.payload()));
		}
		return payloads;
	}

	public static void checkRange(long fromSequenceNr, long toSequenceNr) {
		if (fromSequenceNr < 1) {
			throw new IllegalArgumentException("fromSequenceNr must be at least 1, was " + fromSequenceNr);
		}
		if (toSequenceNr < 0) {
			throw new IllegalArgumentException("toSequenceNr must be 0 or more, was " + toSequenceNr);
		}
	}

}
