package io.cassandrajournal.query;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
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

	private static final Comparator<TaggedEvent<String>> NEWEST_FIRST = Comparator
		.comparing((TaggedEvent<String> event) -> event.offset())
		.reversed();

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
		PriorityQueue<TaggedEvent<String>> smallest = new PriorityQueue<>(limit + 1, NEWEST_FIRST);
		boolean[] overflow = new boolean[1];
		return scan().thenCompose((statement) -> AsyncPaging
			.forEachRow(this.session.executeAsync(statement.bind(after.timestamp(), upperTimestamp)), (row) -> {
				TagOffset offset = new TagOffset(row.getLong("timestamp"), row.getString("persistence_id"),
						row.getLong("sequence_nr"));
				if (offset.compareTo(after) <= 0) {
					return;
				}
				Set<String> tags = row.getSet("tags", String.class);
				if (!filter.matches(tags)) {
					return;
				}
				if (smallest.size() == limit) {
					overflow[0] = true;
					if (offset.compareTo(smallest.peek().offset()) >= 0) {
						return;
					}
					smallest.poll();
				}
				smallest.add(event(offset, tags, row));
			})
			.thenApply((ignored) -> {
				List<TaggedEvent<String>> events = new ArrayList<>(smallest);
				events.sort(Comparator.comparing(TaggedEvent::offset));
				TagOffset resume = events.isEmpty() ? after : events.get(events.size() - 1).offset();
				return new EventsPage<>(events, resume, !overflow[0]);
			}));
	}

	private static TaggedEvent<String> event(TagOffset offset, Set<String> tags, Row row) {
		String payload = row.getString("payload");
		return new TaggedEvent<>(offset, new PersistentEvent<>(offset.persistenceId(), offset.sequenceNr(),
				Instant.ofEpochMilli(offset.timestamp()), tags, (payload != null) ? payload : "null"));
	}

}
