package io.cassandrajournal.projection;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.journal.PersistentEvent;

/**
 * Handles one event of a projection. The projection's cursor moves past the event only after the returned
 * stage completed normally; a failure (thrown or as a failed stage) goes to the recovery strategy. Events of
 * one projection are handled one at a time, in order. Handlers must be idempotent: delivery is
 * at-least-once. (The starter's {@code @ProjectionHandler} annotation declares such handlers on bean
 * methods.)
 *
 * @param <E> the payload type
 */
@FunctionalInterface
public interface EventHandler<E> {

	/**
	 * @param event the event
	 * @return completes when the event's effects are stored
	 * @throws Exception to fail the attempt
	 */
	CompletionStage<Void> handle(PersistentEvent<E> event) throws Exception;

	/**
	 * @param <E> the payload type
	 * @param handler a blocking handler
	 * @return the handler as an {@link EventHandler}
	 */
	static <E> EventHandler<E> blocking(BlockingHandler<E> handler) {
		return (event) -> {
			handler.handle(event);
			return CompletableFuture.completedFuture(null);
		};
	}

	/**
	 * Handles the parts an upcaster split one stored event into (or a single event), each after the previous
	 * one completed: the one loop the projection runner and the starter's annotated handlers share. Whatever
	 * the handler throws, and a {@code null} stage, become the returned stage's outcome, so the stored event
	 * goes through the recovery strategy as a whole.
	 * @param <E> the payload type
	 * @param parts the events, in order
	 * @param handler the handler of each
	 * @return completes when every part was handled, or with the first failure (later parts are not handled)
	 */
	static <E> CompletionStage<Void> inOrder(List<PersistentEvent<E>> parts, EventHandler<E> handler) {
		if (parts.size() == 1) {
			return handleOne(parts.get(0), handler);
		}
		CompletionStage<Void> all = CompletableFuture.completedFuture(null);
		for (PersistentEvent<E> part : parts) {
			all = all.thenCompose((ignored) -> handleOne(part, handler));
		}
		return all;
	}

	private static <E> CompletionStage<Void> handleOne(PersistentEvent<E> part, EventHandler<E> handler) {
		try {
			CompletionStage<Void> stage = handler.handle(part);
			return (stage != null) ? stage : CompletableFuture.completedFuture(null);
		}
		catch (Throwable ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * A handler that does its work before returning.
	 *
	 * @param <E> the payload type
	 */
	@FunctionalInterface
	interface BlockingHandler<E> {

		/**
		 * @param event the event
		 * @throws Exception to fail the attempt
		 */
		void handle(PersistentEvent<E> event) throws Exception;

	}

}
