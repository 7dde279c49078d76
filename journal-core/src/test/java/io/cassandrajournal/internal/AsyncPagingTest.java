package io.cassandrajournal.internal;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.ColumnDefinitions;
import com.datastax.oss.driver.api.core.cql.ExecutionInfo;
import com.datastax.oss.driver.api.core.cql.Row;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Paging without a node: pages are fakes whose next page is a future the test controls or that is already
 * complete (as a prefetched page is when delivering the current one took longer than the read).
 */
class AsyncPagingTest {

	/** Row n answers getInt(0) with n. */
	private static Row row(int n) {
		return (Row) Proxy.newProxyInstance(Row.class.getClassLoader(), new Class<?>[] { Row.class },
				(proxy, method, args) -> switch (method.getName()) {
					case "getInt" -> n;
					case "toString" -> "row " + n;
					case "hashCode" -> n;
					case "equals" -> proxy == args[0];
					default -> throw new UnsupportedOperationException(method.getName());
				});
	}

	/** Pages of {@code rowsPerPage} rows numbered from {@code first}; {@code next} fetches the next page. */
	private static final class Page implements AsyncResultSet {

		private final List<Row> rows = new ArrayList<>();

		private final Supplier<CompletionStage<AsyncResultSet>> next;

		Page(int first, int rowsPerPage, Supplier<CompletionStage<AsyncResultSet>> next) {
			for (int i = 0; i < rowsPerPage; i++) {
				this.rows.add(row(first + i));
			}
			this.next = next;
		}

		@Override
		public ColumnDefinitions getColumnDefinitions() {
			throw new UnsupportedOperationException();
		}

		@Override
		public ExecutionInfo getExecutionInfo() {
			throw new UnsupportedOperationException();
		}

		@Override
		public int remaining() {
			return this.rows.size();
		}

		@Override
		public Iterable<Row> currentPage() {
			return this.rows;
		}

		@Override
		public boolean hasMorePages() {
			return this.next != null;
		}

		@Override
		public CompletionStage<AsyncResultSet> fetchNextPage() {
			return this.next.get();
		}

		@Override
		public boolean wasApplied() {
			return true;
		}

	}

	/** {@code pages} pages of two rows, each fetched as an already completed future. */
	private static CompletionStage<AsyncResultSet> completedPages(int page, int pages, List<String> log) {
		Supplier<CompletionStage<AsyncResultSet>> next = (page + 1 < pages) ? () -> {
			log.add("fetch " + (page + 1));
			return completedPages(page + 1, pages, log);
		} : null;
		return CompletableFuture.completedFuture(new Page(page * 2, 2, next));
	}

	@Test
	void aLongWalkOfPagesThatHaveAlreadyArrivedKeepsAFlatStack() {
		// 200,000 pages: nesting one callback per page would overflow any thread's stack.
		AtomicLong sum = new AtomicLong();
		AtomicLong rows = new AtomicLong();
		CompletionStage<Void> walk = AsyncPaging.forEachRow(completedPages(0, 200_000, new ArrayList<>()), (row) -> {
			rows.incrementAndGet();
			sum.addAndGet(row.getInt(0));
		});
		walk.toCompletableFuture().orTimeout(60, TimeUnit.SECONDS).join();
		assertThat(rows.get()).isEqualTo(400_000);
		assertThat(sum.get()).isEqualTo(399_999L * 400_000 / 2);
	}

	@Test
	void theNextPageIsRequestedBeforeTheRowsOfTheCurrentOneAreDelivered() {
		List<String> log = new ArrayList<>();
		AsyncPaging.forEachRow(completedPages(0, 3, log), (row) -> log.add("row " + row.getInt(0)))
			.toCompletableFuture()
			.join();
		assertThat(log).containsExactly("fetch 1", "row 0", "row 1", "fetch 2", "row 2", "row 3", "row 4", "row 5");
	}

	@Test
	void rowsOfPagesArrivingLaterAreDeliveredInOrderAndTheWalkCompletesAfterTheLast() {
		CompletableFuture<AsyncResultSet> second = new CompletableFuture<>();
		CompletableFuture<AsyncResultSet> third = new CompletableFuture<>();
		List<Integer> seen = new ArrayList<>();
		CompletableFuture<Void> walk = AsyncPaging
			.forEachRow(CompletableFuture.completedFuture(new Page(0, 2, () -> second)), (row) -> seen.add(row.getInt(0)))
			.toCompletableFuture();
		assertThat(seen).containsExactly(0, 1);
		second.complete(new Page(2, 2, () -> third));
		assertThat(walk).isNotDone();
		third.complete(new Page(4, 1, null));
		assertThat(walk).isCompleted();
		assertThat(seen).containsExactly(0, 1, 2, 3, 4);
	}

	@Test
	void queriesRunOneAfterTheOtherAndTheNextStartsWhenThePreviousOneHasNoMorePages() {
		List<String> log = new ArrayList<>();
		List<Supplier<CompletionStage<AsyncResultSet>>> queries = List.of(() -> {
			log.add("query A");
			return completedPages(0, 2, log);
		}, () -> {
			log.add("query B");
			return CompletableFuture.completedFuture(new Page(100, 1, null));
		});
		AsyncPaging.forEachRow(queries.iterator(), (row) -> log.add("row " + row.getInt(0))).toCompletableFuture().join();
		assertThat(log).containsExactly("query A", "fetch 1", "row 0", "row 1", "query B", "row 2", "row 3", "row 100");
	}

	@Test
	void anActionThatReturnsFalseStopsTheWalk() {
		List<Integer> seen = new ArrayList<>();
		Iterator<Supplier<CompletionStage<AsyncResultSet>>> queries = List
			.<Supplier<CompletionStage<AsyncResultSet>>>of(() -> completedPages(0, 10, new ArrayList<>()))
			.iterator();
		boolean stopped = AsyncPaging.forEachRowWhile(queries, (row) -> {
			seen.add(row.getInt(0));
			return row.getInt(0) < 4;
		}).toCompletableFuture().join();
		assertThat(stopped).isTrue();
		assertThat(seen).containsExactly(0, 1, 2, 3, 4);
	}

	@Test
	void aFailedPageOrAFailingActionFailsTheWalk() {
		CompletableFuture<AsyncResultSet> second = new CompletableFuture<>();
		CompletableFuture<Void> walk = AsyncPaging
			.forEachRow(CompletableFuture.completedFuture(new Page(0, 2, () -> second)), (row) -> {
			})
			.toCompletableFuture();
		second.completeExceptionally(new IllegalStateException("read timed out"));
		assertThatThrownBy(walk::join).hasRootCauseMessage("read timed out");

		CompletableFuture<Void> failing = AsyncPaging.forEachRow(completedPages(0, 3, new ArrayList<>()), (row) -> {
			throw new IllegalArgumentException("bad row");
		}).toCompletableFuture();
		assertThatThrownBy(failing::join).hasRootCauseMessage("bad row");
	}

}
