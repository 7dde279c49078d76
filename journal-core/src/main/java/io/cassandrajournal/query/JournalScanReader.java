package io.cassandrajournal.query;

import java.time.Instant;
import java.util.Set;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.journal.PersistentEvent;

/**
 * Answers tag queries without the index: each page scans the whole events table (every partition, with
 * the time range filtered on the replicas) and keeps the {@code limit} smallest matching offsets after the
 * cursor in a bounded heap. Correct for every filter, including {@code not}-only and empty ones, in memory
 * bounded by the page size; its cost is one full table scan per page, so it suits small journals,
 * one-off rebuilds and filters no index can answer, not a busy live feed.
 */
final class JournalScanReader implements TagEventReader {

	private final CqlSession session;

	private final JournalStatements.Statements statements;

	private final String cql;

	/** Prepared on first use: a read journal over another journal implementation may never scan. */
	private volatile @org.jspecify.annotations.Nullable CompletionStage<PreparedStatement> scan;

	public JournalScanReader(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		this.statements = new JournalStatements.Statements(session, options);
		this.cql = "SELECT persistence_id, sequence_nr, timestamp, payload, tags FROM " + options.requireKeyspace() + "."
				+ options.eventsTable() + " WHERE timestamp >= ? AND timestamp <= ? ALLOW FILTERING";
	}

	private CompletionStage<PreparedStatement> scan() {
		CompletionStage<PreparedStatement> prepared = this.scan;
		if (prepared == null || prepared.toCompletableFuture().isCompletedExceptionally()) {
			prepared = this.statements.readAsync(this.cql);
			this.scan = prepared;
		}
		return prepared;
	}

	@Override
	public CompletionStage<EventsPage<String>> read(TagFilter filter, TagOffset after, long upperTimestamp, int limit) {
		SmallestOffsets smallest = new SmallestOffsets(after, limit);
		return scan().thenCompose((statement) -> AsyncPaging
			.forEachRow(this.session.executeAsync(statement.bind(after.timestamp(), upperTimestamp)), (row) -> {
				TagOffset offset = new TagOffset(row.getLong("timestamp"), row.getString("persistence_id"),
						row.getLong("sequence_nr"));
				Set<String> tags = row.getSet("tags", String.class);
				if (filter.matches(tags) && smallest.wants(offset)) {
					smallest.add(event(offset, tags, row));
				}
			})
			.thenApply((ignored) -> smallest.page()));
	}

	private static TaggedEvent<String> event(TagOffset offset, Set<String> tags, Row row) {
		String payload = row.getString("payload");
		return new TaggedEvent<>(offset, new PersistentEvent<>(offset.persistenceId(), offset.sequenceNr(),
				Instant.ofEpochMilli(offset.timestamp()), tags, (payload != null) ? payload : "null"));
	}

}
