package io.cassandrajournal.projection;

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
