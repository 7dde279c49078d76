package io.cassandrajournal.projection;

import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentSkipListMap;

import io.cassandrajournal.internal.Utf8Order;

/**
 * A {@link DeadLetterQueue} in memory, for tests.
 */
public final class InMemoryDeadLetterQueue implements DeadLetterQueue {

	private static final Comparator<DeadLetter> ORDER = Comparator
		.comparing((DeadLetter d) -> d.projection().name())
		.thenComparing((d) -> d.event().persistenceId(), Utf8Order.COMPARATOR)
		.thenComparingLong((d) -> d.event().sequenceNr());

	private final ConcurrentSkipListMap<DeadLetter, Boolean> letters = new ConcurrentSkipListMap<>(ORDER);

	@Override
	public CompletionStage<Void> add(DeadLetter deadLetter) {
		this.letters.put(deadLetter, Boolean.TRUE);
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletionStage<List<DeadLetter>> list(String projectionName, int limit) {
		return CompletableFuture.completedFuture(this.letters.keySet()
			.stream()
			.filter((d) -> d.projection().name().equals(projectionName))
			.limit(limit)
			.toList());
	}

	@Override
	public CompletionStage<Void> remove(DeadLetter deadLetter) {
		this.letters.remove(deadLetter);
		return CompletableFuture.completedFuture(null);
	}

}
