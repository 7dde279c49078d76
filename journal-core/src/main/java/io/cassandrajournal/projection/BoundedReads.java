package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Runs one asynchronous read per item with at most a given number in flight, so a status read of a projection
 * of many segments does not send all its requests at once. Where this fits: {@link SegmentStatuses} reads stored
 * cursors and lag counts with it.
 */
final class BoundedReads {

	private BoundedReads() {
	}

	/**
	 * @param <T> the item type
	 * @param <R> the result type
	 * @param items the items
	 * @param inFlight reads in flight at most, at least 1
	 * @param read the read of one item
	 * @return the results in the order of the items; fails with the first failure (the reads in flight finish,
	 * no new one starts)
	 */
	static <T, R> CompletionStage<List<R>> each(List<T> items, int inFlight, Function<T, CompletionStage<R>> read) {
		List<CompletableFuture<R>> results = new ArrayList<>(items.size());
		for (int i = 0; i < items.size(); i++) {
			results.add(new CompletableFuture<>());
		}
		AtomicInteger next = new AtomicInteger();
		for (int lane = 0; lane < Math.min(inFlight, items.size()); lane++) {
			startNext(items, read, results, next);
		}
		return CompletableFuture.allOf(results.toArray(CompletableFuture[]::new))
			.thenApply((ignored) -> results.stream().map(CompletableFuture::join).toList());
	}

	private static <T, R> void startNext(List<T> items, Function<T, CompletionStage<R>> read,
			List<CompletableFuture<R>> results, AtomicInteger next) {
		int i = next.getAndIncrement();
		if (i >= items.size()) {
			return;
		}
		CompletionStage<R> stage;
		try {
			stage = read.apply(items.get(i));
		}
		catch (RuntimeException ex) {
			stage = CompletableFuture.failedFuture(ex);
		}
		stage.whenComplete((result, error) -> {
			if (error != null) {
				results.get(i).completeExceptionally(error);
				// No new read: fail the ones not started, so the caller learns of the failure at once.
				for (int j = next.getAndSet(items.size()); j < items.size(); j++) {
					results.get(j).completeExceptionally(error);
				}
				return;
			}
			results.get(i).complete(result);
			startNext(items, read, results, next);
		});
	}

}
