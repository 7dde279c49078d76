package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.TagSlices;

/**
 * Deletes the tag index rows of events that {@code deleteTo} removes, so that no tag reader returns a deleted
 * event. It mirrors {@link TagPartitions}' write: the configured layout ({@code events_by_tag}, or the bucketed
 * index), plus, when the bucketed index is configured and the reference {@code events_by_tag} table exists
 * beside it (filled before bucketing was turned on, or by the TypeScript implementation), that table too, and
 * the segment-aware index's copy when it is on.
 * The bucketed index's bucket list is left as it is: a bucket emptied by deletions costs a walk one empty
 * read, never a wrong result.
 */
final class TagIndexDeletes {

	/** Rows per unlogged batch: the deletes of one tag partition, kept well below the batch size limits. */
	private static final int ROWS_PER_BATCH = 100;

	/** Batches in flight at once for one call. */
	private static final int BATCHES_IN_FLIGHT = 16;

	/**
	 * One tag index row's key.
	 *
	 * @param tag the tag
	 * @param timestamp the event's time stamp
	 * @param persistenceId the entity
	 * @param sequenceNr the event's sequence number
	 */
	public record Key(String tag, long timestamp, String persistenceId, long sequenceNr) {
	}

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final List<Layout> layouts = new ArrayList<>();

	public TagIndexDeletes(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		this.options = options;
		JournalStatements.Statements statements = new JournalStatements.Statements(session, options);
		String ks = options.requireKeyspace();
		TagBucketing bucketing = options.tagBucketing();
		if (bucketing == TagBucketing.NONE || exists(session, ks, options.tagIndexTable())) {
			PreparedStatement delete = statements.write("DELETE FROM " + ks + "." + options.tagIndexTable()
					+ " WHERE tag = ? AND timestamp = ? AND persistence_id = ? AND sequence_nr = ?");
			this.layouts.add(new Layout((key) -> key.tag(),
					(key) -> delete.bind(key.tag(), key.timestamp(), key.persistenceId(), key.sequenceNr())));
		}
		int groups = options.tagSliceGroups();
		SliceHash hash = options.sliceHash();
		if (groups != 0 && bucketing == TagBucketing.NONE) {
			// The segment-aware index: the row's partition follows from its persistenceId (TagSlices).
			PreparedStatement delete = statements.write("DELETE FROM " + ks + "." + options.tagIndexSlicedTable()
					+ " WHERE tag = ? AND slice_group = ? AND timestamp = ? AND persistence_id = ? AND sequence_nr = ?");
			this.layouts.add(new Layout(
					(key) -> Map.entry(key.tag(), TagSlices.groupOf(hash, key.persistenceId(), groups)),
					(key) -> delete.bind(key.tag(), TagSlices.groupOf(hash, key.persistenceId(), groups),
							key.timestamp(), key.persistenceId(), key.sequenceNr())));
		}
		else if (groups != 0) {
			// Bucketed too: the partition follows from the time stamp and the persistenceId.
			PreparedStatement delete = statements.write("DELETE FROM " + ks + "." + options.tagIndexSlicedTable()
					+ " WHERE tag = ? AND bucket = ? AND slice_group = ? AND timestamp = ? AND persistence_id = ? "
					+ "AND sequence_nr = ?");
			this.layouts.add(new Layout(
					(key) -> List.of(key.tag(), bucketing.bucketOf(key.timestamp()),
							TagSlices.groupOf(hash, key.persistenceId(), groups)),
					(key) -> delete.bind(key.tag(), bucketing.bucketOf(key.timestamp()),
							TagSlices.groupOf(hash, key.persistenceId(), groups), key.timestamp(), key.persistenceId(),
							key.sequenceNr())));
		}
		if (bucketing != TagBucketing.NONE) {
			PreparedStatement delete = statements.write("DELETE FROM " + ks + "." + options.tagIndexDataTable()
					+ " WHERE tag = ? AND bucket = ? AND timestamp = ? AND persistence_id = ? AND sequence_nr = ?");
			this.layouts.add(new Layout((key) -> Map.entry(key.tag(), bucketing.bucketOf(key.timestamp())),
					(key) -> delete.bind(key.tag(), bucketing.bucketOf(key.timestamp()), key.timestamp(),
							key.persistenceId(), key.sequenceNr())));
		}
	}

	private static boolean exists(CqlSession session, String keyspace, String table) {
		return session.execute(SimpleStatement.newInstance(
				"SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?", keyspace, table))
			.one() != null;
	}

	/**
	 * Deletes rows: one unlogged batch per tag partition (at most {@value #ROWS_PER_BATCH} rows each), a
	 * bounded number in flight. Deleting a row that is not there is harmless.
	 * @param keys the rows
	 * @return completes when every row is deleted
	 */
	public CompletionStage<Void> delete(List<Key> keys) {
		List<BatchStatement> batches = new ArrayList<>();
		for (Layout layout : this.layouts) {
			Map<Object, List<BoundStatement>> byPartition = new LinkedHashMap<>();
			for (Key key : keys) {
				byPartition.computeIfAbsent(layout.partition().apply(key), (p) -> new ArrayList<>())
					.add(layout.delete().apply(key));
			}
			for (List<BoundStatement> deletes : byPartition.values()) {
				for (int from = 0; from < deletes.size(); from += ROWS_PER_BATCH) {
					BatchStatementBuilder batch = BatchStatement.builder(BatchType.UNLOGGED);
					deletes.subList(from, Math.min(deletes.size(), from + ROWS_PER_BATCH)).forEach(batch::addStatement);
					batches.add(batch.setIdempotence(true)
						.setConsistencyLevel(this.options.consistency())
						.setTimeout(this.options.requestTimeout())
						.build());
				}
			}
		}
		return execute(batches, 0);
	}

	private CompletionStage<Void> execute(List<BatchStatement> batches, int from) {
		if (from >= batches.size()) {
			return CompletableFuture.completedFuture(null);
		}
		int to = Math.min(batches.size(), from + BATCHES_IN_FLIGHT);
		List<CompletableFuture<?>> window = new ArrayList<>(to - from);
		for (BatchStatement batch : batches.subList(from, to)) {
			window.add(this.session.executeAsync(batch).toCompletableFuture());
		}
		return CompletableFuture.allOf(window.toArray(CompletableFuture[]::new))
			.thenCompose((ignored) -> execute(batches, to));
	}

	/** One table of the index: a row's partition, and the statement deleting the row. */
	private record Layout(Function<Key, Object> partition, Function<Key, BoundStatement> delete) {
	}

}
