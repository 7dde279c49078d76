package io.cassandrajournal.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.Row;

/**
 * Walks every page of an async result, one page in memory at a time. The reference implementation read
 * only the driver's first page (5,000 rows); this never stops before the last page.
 */
public final class AsyncPaging {

	private AsyncPaging() {
	}

	public static CompletionStage<Void> forEachRow(CompletionStage<AsyncResultSet> first, Consumer<Row> action) {
		return first.thenCompose((page) -> {
			for (Row row : page.currentPage()) {
				action.accept(row);
			}
			return page.hasMorePages() ? forEachRow(page.fetchNextPage(), action)
					: CompletableFuture.<Void>completedFuture(null);
		});
	}

}
