package io.cassandrajournal.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * The raw side: the same CQL the journal sends (claim, unlogged batch, id row), issued directly with the
 * driver, with no validation, serialization, listeners or metrics.
 */
final class RawJournal {

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final PreparedStatement claimFirst;

	private final PreparedStatement claimNext;

	private final PreparedStatement insertEvent;

	private final PreparedStatement insertId;

	private final PreparedStatement setHead;

	private final PreparedStatement selectHead;

	/** With the tag index on: its row insert, as the journal prepares it. */
	private final @Nullable PreparedStatement insertTag;

	/** With {@code tag-slice-groups} on: the sliced copy's insert. */
	private final @Nullable PreparedStatement insertSlicedTag;

	RawJournal(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		this.options = options;
		String ks = options.requireKeyspace();
		this.claimFirst = prepare("INSERT INTO " + ks + ".metadata (persistence_id, max_sequence_nr, updated_at) "
				+ "VALUES (?, ?, ?) IF NOT EXISTS", false);
		this.claimNext = prepare("UPDATE " + ks + ".metadata SET max_sequence_nr = ?, updated_at = ? "
				+ "WHERE persistence_id = ? IF max_sequence_nr = ?", false);
		this.insertEvent = prepare("INSERT INTO " + ks + ".events (persistence_id, partition_nr, sequence_nr, timestamp, "
				+ "payload, tags) VALUES (?, ?, ?, ?, ?, ?)", true);
		this.insertId = prepare("INSERT INTO " + ks + ".all_persistence_ids (tag, persistence_id) VALUES (?, ?)", true);
		this.setHead = prepare("UPDATE " + ks + ".metadata SET max_sequence_nr = ?, updated_at = ? WHERE persistence_id = ?",
				true);
		this.selectHead = prepare("SELECT max_sequence_nr, updated_at FROM " + ks + ".metadata WHERE persistence_id = ?",
				true);
		this.insertTag = options.useTagIndex() ? prepare("INSERT INTO " + ks + "." + options.tagIndexTable()
				+ " (tag, timestamp, persistence_id, sequence_nr, payload, tags) VALUES (?, ?, ?, ?, ?, ?) USING TTL ?",
				true) : null;
		this.insertSlicedTag = (options.useTagIndex() && options.tagSliceGroups() != 0) ? prepare("INSERT INTO " + ks
				+ "." + options.tagIndexSlicedTable() + " (tag, slice_group, timestamp, persistence_id, sequence_nr, "
				+ "payload, tags) VALUES (?, ?, ?, ?, ?, ?, ?) USING TTL ?", true) : null;
	}

	private PreparedStatement prepare(String cql, boolean idempotent) {
		return this.session.prepare(SimpleStatement.newInstance(cql)
			.setConsistencyLevel(this.options.consistency())
			.setIdempotent(idempotent));
	}

	/**
	 * What the journal sends for an append with LWT: on a persistenceId's first append its id row, first (the
	 * journal writes it before anything else, docs/reliability.md finding 14: until 2026-12-02 this side sent it
	 * beside the events batch, one round trip fewer on every first append); the LWT claim; then one unlogged batch.
	 */
	CompletionStage<Void> append(String pid, long expected, int events) {
		long last = expected + events;
		return idRowFirst(pid, expected).thenCompose((ignored) -> {
			long now = System.currentTimeMillis();
			CompletionStage<?> claim = (expected == 0)
					? this.session.executeAsync(this.claimFirst.bind(pid, last, now))
					: this.session.executeAsync(this.claimNext.bind(last, now, pid, expected));
			return claim.thenCompose((rs) -> write(pid, expected, events, now, false, false));
		});
	}

	/** On a persistenceId's first append, its id row alone, as the journal sends it before the rest. */
	private CompletionStage<?> idRowFirst(String pid, long expected) {
		return (expected == 0) ? this.session.executeAsync(this.insertId.bind("_all", pid))
				: CompletableFuture.completedFuture(null);
	}

	/**
	 * What the journal sends for an append of tagged events that fits one batch, with the tag index on: on a
	 * persistenceId's first append its id row, first; the LWT claim; then one logged batch holding the events,
	 * their tag rows and (with {@code tag-slice-groups}) the rows' sliced copies. Requires options with the tag
	 * index on.
	 */
	CompletionStage<Void> appendTagged(String pid, long expected, int events, String tag) {
		PreparedStatement tagRow = java.util.Objects.requireNonNull(this.insertTag, "the tag index is off");
		long now = System.currentTimeMillis();
		long last = expected + events;
		Set<String> tags = Set.of(tag);
		int group = this.options.sliceHash().slice(pid) * Math.max(this.options.tagSliceGroups(), 1) / 1024;
		CompletionStage<?> idRow = (expected == 0) ? this.session.executeAsync(this.insertId.bind("_all", pid))
				: CompletableFuture.completedFuture(null);
		return idRow.thenCompose((ignored) -> (expected == 0)
				? this.session.executeAsync(this.claimFirst.bind(pid, last, now))
				: this.session.executeAsync(this.claimNext.bind(last, now, pid, expected)))
			.thenCompose((claimed) -> {
				BatchStatementBuilder batch = BatchStatement.builder(BatchType.LOGGED);
				for (int i = 1; i <= events; i++) {
					long seq = expected + i;
					batch.addStatement(this.insertEvent.bind(pid, (seq - 1) / this.options.partitionSize(), seq, now,
							Bench.PAYLOAD, tags));
					batch.addStatement(tagRow.bind(tag, now, pid, seq, Bench.PAYLOAD, tags, 0));
					if (this.insertSlicedTag != null) {
						batch.addStatement(
								this.insertSlicedTag.bind(tag, group, now, pid, seq, Bench.PAYLOAD, tags, 0));
					}
				}
				return this.session
					.executeAsync(batch.setIdempotence(true).setConsistencyLevel(this.options.consistency()).build());
			})
			.thenAccept((rs) -> {
			});
	}

	/**
	 * What the journal sends for an append without LWT: on a persistenceId's first append its id row, first (as
	 * above), then the head read (later appends trust the head they wrote), then the unlogged events batch
	 * carrying the head update.
	 */
	CompletionStage<Void> writeWithHead(String pid, long expected, int events, long now) {
		if (expected != 0) {
			return write(pid, expected, events, now, true, false);
		}
		return idRowFirst(pid, expected).thenCompose((ignored) -> this.session.executeAsync(this.selectHead.bind(pid)))
			.thenCompose((rs) -> {
				rs.one();
				return write(pid, expected, events, now, true, false);
			});
	}

	/**
	 * The unlogged events batch alone and, for a new persistenceId, the id row beside it: the cheapest possible
	 * write.
	 */
	CompletionStage<Void> write(String pid, long expected, int events, long now) {
		return write(pid, expected, events, now, false, true);
	}

	private CompletionStage<Void> write(String pid, long expected, int events, long now, boolean head,
			boolean idRowBeside) {
		BatchStatementBuilder batch = BatchStatement.builder(BatchType.UNLOGGED);
		for (int i = 1; i <= events; i++) {
			long seq = expected + i;
			batch.addStatement(this.insertEvent.bind(pid, (seq - 1) / this.options.partitionSize(), seq, now, Bench.PAYLOAD,
					Set.<String>of()));
		}
		if (head) {
			batch.addStatement(this.setHead.bind(expected + events, now, pid));
		}
		List<CompletableFuture<?>> writes = new ArrayList<>();
		writes.add(this.session.executeAsync(batch.setIdempotence(true).setConsistencyLevel(this.options.consistency()).build())
			.toCompletableFuture());
		if (expected == 0 && idRowBeside) {
			writes.add(this.session.executeAsync(this.insertId.bind("_all", pid)).toCompletableFuture());
		}
		return Bench.allOf(writes);
	}

	/** The head read a replay starts with. */
	CompletionStage<Long> head(String pid) {
		return this.session.executeAsync(this.selectHead.bind(pid)).thenApply((rs) -> {
			com.datastax.oss.driver.api.core.cql.Row row = rs.one();
			return (row != null) ? row.getLong(0) : 0L;
		});
	}

}
