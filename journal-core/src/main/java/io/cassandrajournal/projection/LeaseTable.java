package io.cassandrajournal.projection;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.CqlNames;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.internal.TableDefinition;
import io.cassandrajournal.internal.TableDefinition.Column;

/**
 * Ownership of projection segments, one row per (projection, segment) in a table of ours,
 * {@code <durableStateTable>_leases} (the TypeScript implementation neither reads nor writes it). Every change
 * is a lightweight transaction conditioned on what the writer last saw, so two instances can never both take
 * a segment: taking a free segment is {@code INSERT ... IF NOT EXISTS}; taking a released or silent one is
 * {@code UPDATE ... IF epoch = ? AND beat = ?} (exactly the row the contender watched go quiet), raising the
 * epoch; renewing and releasing are {@code UPDATE ... IF owner = ? AND epoch = ?}.
 * <p>
 * Expiry is not a time stamp compared across machines: a contender watches the heartbeat value and takes the
 * segment once it has not changed for the lease timeout on the contender's own monotonic clock
 * ({@link LeaseWatch}), while the owner stops using its lease a margin before the timeout counted from the
 * start of its last successful renewal. A write whose outcome is unknown (a timeout after Cassandra may have
 * applied it) is settled by reading the row back at the serial consistency.
 * <p>
 * A lease alone does not stop an owner that paused (a long GC, SIGSTOP, a suspended machine whose monotonic
 * clock did not count the suspension) from writing when it wakes: the new owner also fences the segment's cursor
 * ({@link DurableStateOffsetStore#fence}). Only the cursor is fenced: a stale owner's handlers may still run a
 * batch whose effects race the new owner's, so handlers of shared projections must be idempotent (guard on the
 * event's sequence number).
 */
final class LeaseTable {

	private final CqlSession session;

	private final PreparedStatement read;

	private final PreparedStatement watch;

	private final PreparedStatement insert;

	private final PreparedStatement takeOver;

	private final PreparedStatement renew;

	private final PreparedStatement release;

	private LeaseTable(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		JournalStatements.Statements s = new JournalStatements.Statements(session, options);
		String table = options.requireKeyspace() + "." + tableName(options);
		String key = " WHERE projection = ? AND segment = ?";
		this.read = s.serialRead("SELECT owner, epoch, beat FROM " + table + key);
		this.watch = s.read("SELECT segment, owner, epoch, beat FROM " + table + " WHERE projection = ? AND segment IN ?");
		this.insert = s.conditional("INSERT INTO " + table
				+ " (projection, segment, owner, epoch, beat) VALUES (?, ?, ?, 1, ?) IF NOT EXISTS");
		this.takeOver = s.conditional(
				"UPDATE " + table + " SET owner = ?, epoch = ?, beat = ?" + key + " IF epoch = ? AND beat = ?");
		this.renew = s.conditional("UPDATE " + table + " SET beat = ?" + key + " IF owner = ? AND epoch = ?");
		this.release = s.conditional(
				"UPDATE " + table + " SET owner = null, beat = ?" + key + " IF owner = ? AND epoch = ?");
	}

	/**
	 * @param session an open session
	 * @param options the options (keyspace, durable state table, consistency levels)
	 * @return a ready lease table; the table is created or checked
	 */
	static LeaseTable create(CqlSession session, CassandraJournalOptions options) {
		SchemaManager.ensure(session, options, List.of(table(options)));
		return new LeaseTable(session, options);
	}

	static TableDefinition table(CassandraJournalOptions options) {
		String name = tableName(options);
		return new TableDefinition(name, "CREATE TABLE IF NOT EXISTS " + options.requireKeyspace() + "." + name
				+ " (projection text, segment text, owner text, epoch bigint, beat bigint,"
				+ " PRIMARY KEY ((projection, segment)))",
				List.of(Column.partitionKey("projection", "text", 0), Column.partitionKey("segment", "text", 1),
						Column.regular("owner", "text"), Column.regular("epoch", "bigint"),
						Column.regular("beat", "bigint")));
	}

	private static String tableName(CassandraJournalOptions options) {
		return CqlNames.check("durableStateTable + '_leases' (the projection lease table)",
				options.durableStateTable() + "_leases");
	}

	/**
	 * @param projection the projection
	 * @param segment the segment
	 * @return the lease row, read at the serial consistency (so an in-flight change is completed first), empty
	 * if the segment was never taken
	 */
	CompletionStage<Optional<Lease>> read(String projection, String segment) {
		return this.session.executeAsync(this.read.bind(projection, segment))
			.thenApply((rs) -> Optional.ofNullable(rs.one()).map((row) -> lease(projection, segment, row)));
	}

	/**
	 * Reads many segments' rows in one request, at the normal read consistency: enough to watch heartbeats (a
	 * beat read was written, so its first sight is after the owner's renewal started; a stale row only makes the
	 * take conditioned on it fail).
	 * @param projection the projection
	 * @param segments the segments
	 * @return the rows found, by segment (every page of the answer)
	 */
	CompletionStage<Map<String, Lease>> watch(String projection, List<String> segments) {
		Map<String, Lease> rows = new HashMap<>();
		// Every page: with more segments than a page holds, the rows past the first page would read as free.
		return AsyncPaging.forEachRow(this.session.executeAsync(this.watch.bind(projection, segments)), (row) -> {
			String segment = row.getString("segment");
			rows.put(segment, lease(projection, segment, row));
		}).thenApply((ignored) -> rows);
	}

	/**
	 * Takes a segment: a free one (never taken) when {@code seen} is empty, otherwise exactly the row
	 * {@code seen} describes, which the caller has found released or silent for the lease timeout.
	 * @param projection the projection
	 * @param segment the segment
	 * @param instance the instance taking it
	 * @param seen the row as the caller last read it, empty if there was none
	 * @return the lease now held, or empty if another instance changed the row first
	 */
	CompletionStage<Optional<Lease>> acquire(String projection, String segment, String instance,
			Optional<Lease> seen) {
		long beat = nextBeat();
		Lease wanted = new Lease(projection, segment, instance, seen.map((s) -> s.epoch() + 1).orElse(1L), beat);
		CompletionStage<AsyncResultSet> write = seen.isEmpty()
				? this.session.executeAsync(this.insert.bind(projection, segment, instance, beat))
				: this.session.executeAsync(this.takeOver.bind(instance, wanted.epoch(), beat, projection, segment,
						seen.get().epoch(), seen.get().beat()));
		return settle(write, wanted);
	}

	/**
	 * @param lease a lease this instance holds
	 * @return the renewed lease (a new heartbeat value), or empty if it is no longer this instance's
	 */
	CompletionStage<Optional<Lease>> renew(Lease lease) {
		long beat = nextBeat();
		Lease wanted = new Lease(lease.projection(), lease.segment(), lease.owner(), lease.epoch(), beat);
		return settle(this.session.executeAsync(
				this.renew.bind(beat, lease.projection(), lease.segment(), lease.owner(), lease.epoch())), wanted);
	}

	/**
	 * Gives a segment up at once (on a graceful stop), so another instance can take it without waiting for the
	 * lease timeout.
	 * @param lease a lease this instance holds
	 * @return true if released, false if it was no longer this instance's
	 */
	CompletionStage<Boolean> release(Lease lease) {
		long beat = nextBeat();
		Lease wanted = new Lease(lease.projection(), lease.segment(), null, lease.epoch(), beat);
		return settle(this.session.executeAsync(
				this.release.bind(beat, lease.projection(), lease.segment(), lease.owner(), lease.epoch())), wanted)
			.thenApply(Optional::isPresent);
	}

	/** The write's outcome: applied, not applied, or unknown and then settled by a serial read. */
	private CompletionStage<Optional<Lease>> settle(CompletionStage<AsyncResultSet> write, Lease wanted) {
		return write.handle((rs, error) -> {
			if (error == null) {
				return CompletableFuture.completedFuture(rs.wasApplied() ? Optional.of(wanted) : Optional.<Lease>empty());
			}
			// Applied or not: only the row can tell. If it cannot be read either, fail (the caller tries again
			// later; a lease taken without our knowing lapses, as nobody renews it).
			Throwable cause = Errors.unwrap(error);
			return read(wanted.projection(), wanted.segment()).handle((row, readError) -> {
				if (readError != null) {
					Throwable readCause = Errors.unwrap(readError);
					readCause.addSuppressed(cause);
					throw new java.util.concurrent.CompletionException(readCause);
				}
				return row.filter((stored) -> stored.sameTerm(wanted));
			});
		}).thenCompose((stage) -> stage);
	}

	private static Lease lease(String projection, String segment, Row row) {
		return new Lease(projection, segment, row.getString("owner"), row.getLong("epoch"), row.getLong("beat"));
	}

	private static long nextBeat() {
		return ThreadLocalRandom.current().nextLong();
	}

}
