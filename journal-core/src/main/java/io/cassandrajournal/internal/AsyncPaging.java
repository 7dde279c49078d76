package io.cassandrajournal.internal;

import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import org.jspecify.annotations.Nullable;

/**
 * Walks every page of an async result, never stopping before the last page (the reference implementation read
 * only the driver's first page, 5,000 rows).
 * <p>
 * <b>Prefetch.</b> The next page (or the next query's first page) is requested before the rows of the current
 * one are handed to the action, so the server reads it while we decode and deliver: at most two pages are in
 * memory. Pages that have already arrived are walked in a loop, not by nesting callbacks, so a walk of any
 * length keeps a flat stack. Rows reach the action in order, one at a time, on the thread that completed the
 * page (a driver thread) or the caller's.
 */
public final class AsyncPaging {

	private AsyncPaging() {
	}

	public static CompletionStage<Void> forEachRow(CompletionStage<AsyncResultSet> first, Consumer<Row> action) {
		return forEachRow(List.<Supplier<CompletionStage<AsyncResultSet>>>of(() -> first).iterator(), action);
	}

	/**
	 * @param queries queries run one after the other; the next one starts when the previous one's last page
	 * arrives
	 * @param action called once per row, in order
	 * @return completes after the last row of the last query
	 */
	public static CompletionStage<Void> forEachRow(Iterator<? extends Supplier<? extends CompletionStage<AsyncResultSet>>> queries,
			Consumer<Row> action) {
		return forEachRowWhile(queries, (row) -> {
			action.accept(row);
			return true;
		}).thenApply((stopped) -> null);
	}

	/**
	 * @param queries queries run one after the other; the next one starts when the previous one's last page
	 * arrives
	 * @param action called once per row, in order, until it returns false
	 * @return whether the action stopped the walk (true) or every row was visited (false)
	 */
	public static CompletionStage<Boolean> forEachRowWhile(
			Iterator<? extends Supplier<? extends CompletionStage<AsyncResultSet>>> queries, Predicate<Row> action) {
		CompletableFuture<Boolean> done = new CompletableFuture<>();
		if (!queries.hasNext()) {
			done.complete(false);
			return done;
		}
		Walk walk = new Walk(queries, action, done);
		try {
			walk.drive(queries.next().get().toCompletableFuture());
		}
		catch (RuntimeException ex) {
			walk.fail(ex);
		}
		return done;
	}

	/** One walk's state; only one {@link #drive} call processes pages at a time (each page has one listener). */
	private static final class Walk {

		private final Iterator<? extends Supplier<? extends CompletionStage<AsyncResultSet>>> queries;

		private final Predicate<Row> action;

		private final CompletableFuture<Boolean> done;

		Walk(Iterator<? extends Supplier<? extends CompletionStage<AsyncResultSet>>> queries, Predicate<Row> action,
				CompletableFuture<Boolean> done) {
			this.queries = queries;
			this.action = action;
			this.done = done;
		}

		void drive(CompletableFuture<AsyncResultSet> first) {
			CompletableFuture<AsyncResultSet> current = first;
			while (true) {
				if (!current.isDone()) {
					CompletableFuture<AsyncResultSet> pending = current;
					pending.whenComplete((page, error) -> drive(pending));
					return;
				}
				CompletableFuture<AsyncResultSet> next;
				try {
					AsyncResultSet page = current.join();
					next = next(page);
					for (Row row : page.currentPage()) {
						if (!this.action.test(row)) {
							this.done.complete(true);
							return;
						}
					}
				}
				catch (RuntimeException | Error ex) {
					fail(ex);
					return;
				}
				if (next == null) {
					this.done.complete(false);
					return;
				}
				current = next;
			}
		}

		private @Nullable CompletableFuture<AsyncResultSet> next(AsyncResultSet page) {
			if (page.hasMorePages()) {
				return page.fetchNextPage().toCompletableFuture();
			}
			return this.queries.hasNext() ? this.queries.next().get().toCompletableFuture() : null;
		}

		void fail(Throwable error) {
			// As a thenCompose chain would: the failure wrapped once in a CompletionException.
			this.done.completeExceptionally((error instanceof CompletionException) ? error : new CompletionException(error));
		}

	}

}
