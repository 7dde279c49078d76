package io.cassandrajournal.internal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.api.core.servererrors.WriteType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.JournalConcurrencyException;

/**
 * The write path of {@link io.cassandrajournal.journal.CassandraJournal}: claim the sequence range with one
 * Paxos round on the metadata row, then write the events in one unlogged batch per events partition (and
 * the tag index rows in one batch per tag), then, on failure, release the claim conditionally so a retry
 * with the same expected sequence number succeeds.
 */
public final class AppendWriter {

	private static final Logger logger = LoggerFactory.getLogger(AppendWriter.class);

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final JournalStatements statements;

	/** Only with the tag index on: its tables may not exist otherwise. */
	private final @org.jspecify.annotations.Nullable TagPartitions tagIndex;

	/** Heads this process wrote without LWT: saves the head read when the expectation matches. */
	private final java.util.Map<String, Long> knownHeads = new java.util.concurrent.ConcurrentHashMap<>();

	public AppendWriter(CqlSession session, CassandraJournalOptions options, JournalStatements statements) {
		this.session = session;
		this.options = options;
		this.statements = statements;
		this.tagIndex = options.useTagIndex() ? TagPartitions.create(session, options) : null;
	}

	public CompletionStage<AppendResult> append(String persistenceId, long expected, List<EventToAppend> events,
			List<String> payloads) {
		long timestamp = this.options.clock().millis();
		long last = expected + events.size();
		AppendResult result = new AppendResult(persistenceId, expected + 1, last, Instant.ofEpochMilli(timestamp),
				allTags(events));
		if (!this.options.lightweightTransactions()) {
			return appendWithoutClaim(persistenceId, expected, events, payloads, timestamp, result);
		}
		return claim(persistenceId, expected, last, timestamp)
			.thenCompose((claimed) -> writeRows(persistenceId, expected, events, payloads, timestamp, null)
				.handle((ok, error) -> (error == null) ? CompletableFuture.completedFuture(result)
						: release(persistenceId, expected, last, error).<AppendResult>thenApply((ignored) -> {
							throw new CompletionException(error);
						}))
				.thenCompose((stage) -> stage));
	}

	private CompletionStage<Void> claim(String persistenceId, long expected, long claimed, long timestamp) {
		CompletionStage<AsyncResultSet> attempt = (expected == 0)
				? this.session.executeAsync(this.statements.claimFirst.bind(persistenceId, claimed, timestamp))
				: this.session.executeAsync(this.statements.claimNext.bind(claimed, timestamp, persistenceId, expected));
		return attempt.handle((rs, error) -> {
			if (error != null) {
				if (Errors.unwrap(error) instanceof WriteTimeoutException timeout && timeout.getWriteType() == WriteType.CAS) {
					return resolveUncertainClaim(persistenceId, expected, claimed, timestamp, error);
				}
				return CompletableFuture.<Void>failedFuture(error);
			}
			if (rs.wasApplied()) {
				return CompletableFuture.<Void>completedFuture(null);
			}
			Row current = rs.one();
			long actual = (current != null && current.getColumnDefinitions().contains("max_sequence_nr"))
					? current.getLong("max_sequence_nr") : 0L;
			return CompletableFuture.<Void>failedFuture(new JournalConcurrencyException(persistenceId, expected, actual));
		}).thenCompose((stage) -> stage);
	}

	/**
	 * A Paxos round that timed out may or may not have been applied. A serial read completes any round in
	 * flight and tells: if the head is our claim with our time stamp, the claim won and the append goes on.
	 */
	private CompletionStage<Void> resolveUncertainClaim(String persistenceId, long expected, long claimed,
			long timestamp, Throwable timeout) {
		return this.session.executeAsync(this.statements.selectHeadSerial.bind(persistenceId))
			.handle((rs, error) -> {
				Row row = (error == null) ? rs.one() : null;
				if (row != null && row.getLong("max_sequence_nr") == claimed && row.getLong("updated_at") == timestamp) {
					logger.debug("Claim of {} for '{}' timed out but was applied", claimed, persistenceId);
					return (Void) null;
				}
				if (row != null && row.getLong("max_sequence_nr") != expected) {
					throw new CompletionException(
							new JournalConcurrencyException(persistenceId, expected, row.getLong("max_sequence_nr")));
				}
				throw new CompletionException(timeout);
			});
	}

	private CompletionStage<Void> release(String persistenceId, long expected, long claimed, Throwable cause) {
		CompletionStage<AsyncResultSet> release = (expected == 0)
				? this.session.executeAsync(this.statements.releaseFirst.bind(persistenceId, claimed))
				: this.session.executeAsync(this.statements.claimNext.bind(expected, this.options.clock().millis(),
						persistenceId, claimed));
		return release.handle((rs, error) -> {
			if (error != null) {
				logger.warn("Append to '{}' failed ({}) and releasing its claim {} failed too ({}): sequence numbers "
						+ "{}..{} stay claimed without events (a gap the consistency check reports)", persistenceId,
						Errors.unwrap(cause).getMessage(), claimed, Errors.unwrap(error).getMessage(), expected + 1,
						claimed);
			}
			else if (!rs.wasApplied()) {
				logger.warn("Append to '{}' failed and its claim {} was already moved on by another writer; not released",
						persistenceId, claimed);
			}
			return null;
		});
	}

	private CompletionStage<AppendResult> appendWithoutClaim(String persistenceId, long expected,
			List<EventToAppend> events, List<String> payloads, long timestamp, AppendResult result) {
		// The documented unsafe path: check the head, write. Two writers that both see the same head both pass
		// and the later batch silently overwrites the earlier one's events. The head this process last wrote
		// is trusted when it matches the expectation (the check is advisory anyway); otherwise it is read.
		Long known = this.knownHeads.get(persistenceId);
		CompletionStage<Long> head = (known != null && known == expected) ? CompletableFuture.completedFuture(known)
				: this.session.executeAsync(this.statements.selectHead.bind(persistenceId)).thenApply((rs) -> {
					Row row = rs.one();
					return (row != null) ? row.getLong("max_sequence_nr") : 0L;
				});
		return head.thenCompose((current) -> {
			if (current != expected) {
				this.knownHeads.remove(persistenceId);
				return CompletableFuture.failedFuture(new JournalConcurrencyException(persistenceId, expected, current));
			}
			// The head rides in the first events batch: one request, as without a journal.
			return writeRows(persistenceId, expected, events, payloads, timestamp,
					this.statements.setHead.bind(result.lastSequenceNr(), timestamp, persistenceId)).thenApply((ignored) -> {
				if (this.knownHeads.size() > 100_000) {
					this.knownHeads.clear();
				}
				this.knownHeads.put(persistenceId, result.lastSequenceNr());
				return result;
			});
		});
	}

	private CompletionStage<Void> writeRows(String persistenceId, long expected, List<EventToAppend> events,
			List<String> payloads, long timestamp, com.datastax.oss.driver.api.core.cql.@org.jspecify.annotations.Nullable BoundStatement head) {
		Map<Long, BatchStatementBuilder> byPartition = new LinkedHashMap<>();
		List<TagPartitions.TagRow> tagRows = new ArrayList<>();
		for (int i = 0; i < events.size(); i++) {
			long sequenceNr = expected + 1 + i;
			long partition = (sequenceNr - 1) / this.options.partitionSize();
			Set<String> tags = events.get(i).tags();
			byPartition.computeIfAbsent(partition, (p) -> BatchStatement.builder(BatchType.UNLOGGED))
				.addStatement(this.statements.insertEvent.bind(persistenceId, partition, sequenceNr, timestamp,
						payloads.get(i), tags));
			if (this.tagIndex != null) {
				for (String tag : tags) {
					tagRows.add(new TagPartitions.TagRow(tag, timestamp, persistenceId, sequenceNr, payloads.get(i), tags));
				}
			}
		}
		if (head != null) {
			byPartition.values().iterator().next().addStatement(head);
		}
		List<CompletableFuture<?>> writes = new ArrayList<>();
		for (BatchStatementBuilder batch : byPartition.values()) {
			writes.add(execute(batch));
		}
		if (!tagRows.isEmpty()) {
			writes.add(this.tagIndex.write(tagRows).toCompletableFuture());
		}
		if (expected == 0) {
			writes.add(this.session
				.executeAsync(this.statements.insertPersistenceId.bind(
						PersistenceIdBuckets.bucketOf(persistenceId, this.options.persistenceIdBuckets()), persistenceId))
				.toCompletableFuture());
		}
		return CompletableFuture.allOf(writes.toArray(CompletableFuture[]::new));
	}

	private CompletableFuture<AsyncResultSet> execute(BatchStatementBuilder batch) {
		BatchStatement statement = batch.setIdempotence(true)
			.setConsistencyLevel(this.options.consistency())
			.setTimeout(this.options.requestTimeout())
			.build();
		return this.session.executeAsync(statement).toCompletableFuture();
	}

	private static Set<String> allTags(List<EventToAppend> events) {
		Set<String> tags = new HashSet<>();
		for (EventToAppend event : events) {
			tags.addAll(event.tags());
		}
		return tags;
	}

}
