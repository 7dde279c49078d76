package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.Utf8Order;

/**
 * Reads {@code all_persistence_ids} a page at a time: one bounded query per bucket ({@code '_all'} plus
 * the hash buckets), merged in id order and cut to the page size. Memory: buckets x page size ids.
 */
final class PersistenceIdReader {

	private final CqlSession session;

	private final List<String> buckets;

	private final PreparedStatement firstPage;

	private final PreparedStatement nextPage;

	public PersistenceIdReader(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		this.buckets = PersistenceIdBuckets.bucketsToRead(options.persistenceIdBuckets());
		JournalStatements.Statements s = new JournalStatements.Statements(session, options);
		String table = options.requireKeyspace() + "." + options.allIdsTable();
		this.firstPage = s.read("SELECT persistence_id FROM " + table + " WHERE tag = ? LIMIT ?");
		this.nextPage = s.read("SELECT persistence_id FROM " + table + " WHERE tag = ? AND persistence_id > ? LIMIT ?");
	}

	/**
	 * @param afterId the last id of the previous page, or {@code null} for the first page
	 * @param limit at most this many ids
	 * @return ids after {@code afterId}, ascending (Cassandra's order: UTF-8 bytes); fewer than
	 * {@code limit} only on the last page
	 */
	public CompletionStage<List<String>> page(String afterId, int limit) {
		List<CompletableFuture<List<String>>> reads = new ArrayList<>();
		for (String bucket : this.buckets) {
			// Every page of the bounded read: a LIMIT above the statements' page size still yields LIMIT ids.
			List<String> ids = new ArrayList<>();
			reads.add(AsyncPaging
				.forEachRow(this.session.executeAsync((afterId == null) ? this.firstPage.bind(bucket, limit)
						: this.nextPage.bind(bucket, afterId, limit)), (row) -> ids.add(row.getString(0)))
				.thenApply((read) -> ids)
				.toCompletableFuture());
		}
		return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply((ignored) -> {
			TreeSet<String> merged = new TreeSet<>(Utf8Order.COMPARATOR);
			for (CompletableFuture<List<String>> read : reads) {
				merged.addAll(read.join());
			}
			List<String> page = new ArrayList<>(limit);
			for (String id : merged) {
				if (page.size() == limit) {
					break;
				}
				page.add(id);
			}
			return page;
		});
	}

}
