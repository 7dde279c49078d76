package io.cassandrajournal.benchmarks;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;

/** Chains the operations on one key so they run one after another; different keys run concurrently. */
final class PerKeyOrder {

	private final AtomicReferenceArray<CompletableFuture<?>> tails;

	PerKeyOrder(int keys) {
		this.tails = new AtomicReferenceArray<>(keys);
	}

	CompletionStage<?> after(int key, Supplier<CompletionStage<?>> operation) {
		CompletableFuture<?> previous = this.tails.get(key);
		CompletableFuture<?> next = (previous == null) ? operation.get().toCompletableFuture()
				: previous.thenCompose((ignored) -> operation.get()).toCompletableFuture();
		this.tails.set(key, next);
		return next;
	}

}
