package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import io.cassandrajournal.journal.PersistentEvent;

/**
 * One batch's events handed to a handler, in one lane or in {@code concurrency} lanes keyed by persistenceId:
 * one entity's events stay in one lane, in order. It owns the count of the batch's handled prefix (the
 * events before it are all handled), so the stored cursor never passes an event another lane has not
 * finished. Where this fits: {@link ProjectionRunner} makes one per batch, with
 * {@link FailureHandling#handle} as the step.
 */
final class Lanes {

	private final List<PersistentEvent<String>> events;

	private final Function<PersistentEvent<String>, CompletionStage<Void>> step;

	private final BooleanSupplier goesOn;

	private final boolean[] done;

	private int prefix;

	/**
	 * @param events the batch
	 * @param step handles one event; a failed stage ends its lane
	 * @param goesOn whether the batch may go on with its next event (false once the projection stops)
	 */
	Lanes(List<PersistentEvent<String>> events, Function<PersistentEvent<String>, CompletionStage<Void>> step,
			BooleanSupplier goesOn) {
		this.events = events;
		this.step = step;
		this.goesOn = goesOn;
		this.done = new boolean[events.size()];
	}

	/** @return how many events at the start of the batch are all handled */
	synchronized int handled() {
		return this.prefix;
	}

	private synchronized void markHandled(int index) {
		this.done[index] = true;
		while (this.prefix < this.done.length && this.done[this.prefix]) {
			this.prefix++;
		}
	}

	/**
	 * Handles the events in {@code concurrency} lanes (one lane when {@code concurrency} is 1 or the batch
	 * has one event).
	 * @param lanes where a lane runs; a continuation after an event completed later runs there too, since the
	 * next handler may block
	 * @return completes when every lane ended; fails with the first failure of a lane
	 */
	CompletionStage<Void> run(int concurrency, Executor lanes) {
		if (concurrency <= 1 || this.events.size() <= 1) {
			List<Integer> all = new ArrayList<>(this.events.size());
			for (int i = 0; i < this.events.size(); i++) {
				all.add(i);
			}
			return runLane(all, 0, lanes);
		}
		List<List<Integer>> byLane = new ArrayList<>(concurrency);
		for (int i = 0; i < concurrency; i++) {
			byLane.add(new ArrayList<>());
		}
		for (int i = 0; i < this.events.size(); i++) {
			byLane.get(lane(this.events.get(i).persistenceId(), concurrency)).add(i);
		}
		List<CompletableFuture<Void>> running = new ArrayList<>();
		for (List<Integer> lane : byLane) {
			if (!lane.isEmpty()) {
				running.add(CompletableFuture.supplyAsync(() -> runLane(lane, 0, lanes), lanes)
					.thenCompose((stage) -> stage));
			}
		}
		return CompletableFuture.allOf(running.toArray(CompletableFuture[]::new));
	}

	/** @return the lane of a persistenceId */
	static int lane(String persistenceId, int concurrency) {
		return Math.floorMod(persistenceId.hashCode(), concurrency);
	}

	private CompletionStage<Void> runLane(List<Integer> lane, int position, Executor continueOn) {
		int k = position;
		while (k < lane.size() && this.goesOn.getAsBoolean()) {
			int index = lane.get(k);
			CompletableFuture<Void> stage = this.step.apply(this.events.get(index)).toCompletableFuture();
			if (stage.isDone() && !stage.isCompletedExceptionally()) {
				// Completed on this thread: go on without a hop.
				markHandled(index);
				k++;
				continue;
			}
			int next = k + 1;
			// Completed later, possibly on a driver thread: continue where lanes run, since the next handler
			// may block.
			return stage.thenComposeAsync((ignored) -> {
				markHandled(index);
				return runLane(lane, next, continueOn);
			}, continueOn);
		}
		return CompletableFuture.completedFuture(null);
	}

}
