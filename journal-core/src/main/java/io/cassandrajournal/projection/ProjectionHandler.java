package io.cassandrajournal.projection;

import java.util.concurrent.CompletableFuture;

import io.cassandrajournal.journal.PersistentEvent;

/**
 * The former name of {@link EventHandler}, kept so that existing code compiles.
 *
 * @param <E> the payload type
 * @deprecated use {@link EventHandler}: one name per concept ({@code @ProjectionHandler} is the starter's
 * annotation)
 */
@Deprecated(since = "0.1.0")
@FunctionalInterface
public interface ProjectionHandler<E> extends EventHandler<E> {

	/**
	 * @param <E> the payload type
	 * @param handler a blocking handler
	 * @return the handler
	 * @deprecated use {@link EventHandler#blocking}
	 */
	@Deprecated(since = "0.1.0")
	static <E> ProjectionHandler<E> blocking(BlockingHandler<E> handler) {
		return (event) -> {
			handler.handle(event);
			return CompletableFuture.completedFuture(null);
		};
	}

	/**
	 * @param <E> the payload type
	 * @deprecated use {@link EventHandler.BlockingHandler}
	 */
	@Deprecated(since = "0.1.0")
	@FunctionalInterface
	interface BlockingHandler<E> extends EventHandler.BlockingHandler<E> {

		@Override
		void handle(PersistentEvent<E> event) throws Exception;

	}

}
