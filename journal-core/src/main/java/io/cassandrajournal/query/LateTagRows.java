package io.cassandrajournal.query;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.Seal;
import io.cassandrajournal.internal.TagSlices;
import io.cassandrajournal.internal.WarnOnce;
import io.cassandrajournal.journal.PersistentEvent;

/**
 * Where this fits: the live tag feed's check of a tag index row it first reads at least {@code in-flight-wait}
 * after the row's time stamp (docs/reliability.md, finding 13, part 3). Such a row may belong to an uncertain append
 * whose logged batch landed late: a replay may have sealed the append's numbers in the events table (a deletion with
 * a write time after the claim's time plus the wait), which shadows its events row but not its tag rows. The check
 * reads the events row: present, the row is delivered; absent, the number is made final here the way a replay makes
 * it final (the same seal, then the event's tag rows deleted, in the feed's layout, with the seal's write time), and
 * the row is skipped and counted.
 * <p>
 * Absent is final only because of that seal: the read starts at least {@code in-flight-wait} after the claim's time
 * stamp (the row's time stamp is the claim's), and a writer acknowledges its batch only within that time of its claim
 * (its deadline), so an event missing from such a read (at the journal's read consistency) was never acknowledged;
 * sealing it makes its batch, whenever it lands, invisible to every reader. A seal or a delete that fails fails the
 * check: the row is neither delivered nor skipped, and the feed's poll fails and is read again.
 */
final class LateTagRows {

	private static final Logger logger = LoggerFactory.getLogger(LateTagRows.class);

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final PreparedStatement event;

	private final Seal seal;

	private final PreparedStatement deleteTagRow;

	/** The segment-aware index's copy of the row, when that index is on. */
	private final @Nullable PreparedStatement deleteSlicedTagRow;

	private final WarnOnce warnings = new WarnOnce(10_000);

	private final AtomicLong skipped = new AtomicLong();

	LateTagRows(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		this.options = options;
		JournalStatements.Statements statements = new JournalStatements.Statements(session, options);
		String ks = options.requireKeyspace();
		this.event = statements.read("SELECT sequence_nr FROM " + ks + "." + options.eventsTable()
				+ " WHERE persistence_id = ? AND partition_nr = ? AND sequence_nr = ?");
		// The seal a replay writes over a crash gap (ContiguousReplay), for one number.
		this.seal = Seal.withoutMemo(session, options);
		this.deleteTagRow = (options.tagBucketing() == TagBucketing.NONE)
				? statements.write("DELETE FROM " + ks + "." + options.tagIndexTable()
						+ " USING TIMESTAMP ? WHERE tag = ? AND timestamp = ? AND persistence_id = ? AND sequence_nr = ?")
				: statements.write("DELETE FROM " + ks + "." + options.tagIndexDataTable()
						+ " USING TIMESTAMP ? WHERE tag = ? AND bucket = ? AND timestamp = ? AND persistence_id = ? "
						+ "AND sequence_nr = ?");
		this.deleteSlicedTagRow = (options.tagSliceGroups() == 0) ? null
				: statements.write("DELETE FROM " + ks + "." + options.tagIndexSlicedTable() + " USING TIMESTAMP ? WHERE tag = ? "
						+ ((options.tagBucketing() == TagBucketing.NONE) ? "" : "AND bucket = ? ")
						+ "AND slice_group = ? AND timestamp = ? AND persistence_id = ? AND sequence_nr = ?");
	}

	/** @return how many rows this check skipped since it was created */
	long skipped() {
		return this.skipped.get();
	}

	/**
	 * @param rows tag rows first read at least {@code in-flight-wait} after their time stamps, by a read that
	 * started that late
	 * @return the offsets of the rows whose events are absent, now sealed, their tag rows deleted: not to deliver
	 */
	CompletionStage<Set<TagOffset>> absent(List<TaggedEvent<String>> rows) {
		List<CompletableFuture<TagOffset>> checks = new ArrayList<>(rows.size());
		for (TaggedEvent<String> row : rows) {
			checks.add(check(row).toCompletableFuture());
		}
		return CompletableFuture.allOf(checks.toArray(CompletableFuture[]::new)).thenApply((ignored) -> {
			Set<TagOffset> absent = new HashSet<>();
			for (CompletableFuture<TagOffset> check : checks) {
				TagOffset offset = check.join();
				if (offset != null) {
					absent.add(offset);
				}
			}
			return absent;
		});
	}

	/** @return the row's offset if its event is absent (then sealed and its tag rows deleted), else null */
	private CompletionStage<TagOffset> check(TaggedEvent<String> row) {
		PersistentEvent<String> event = row.event();
		long partition = (event.sequenceNr() - 1) / this.options.partitionSize();
		return this.session
			.executeAsync(this.event.bind(event.persistenceId(), partition, event.sequenceNr()))
			.thenCompose((rs) -> {
				if (rs.one() != null) {
					return CompletableFuture.<TagOffset>completedFuture(null);
				}
				// The row's time stamp is its claim's; the write time also shadows the tag rows (Seal#writeTime).
				long writeTime = this.seal.writeTime(row.offset().timestamp());
				return this.seal.write(event.persistenceId(), event.sequenceNr(), event.sequenceNr(), writeTime)
					.thenCompose((sealed) -> deleteTagRows(row, writeTime))
					.thenApply((deleted) -> {
						this.skipped.incrementAndGet();
						if (this.warnings.first(event.persistenceId() + "#" + event.sequenceNr())) {
							logger.warn("Tag index row of '{}' #{} (time stamp {}) was first read more than in-flight-wait "
									+ "({}) after its time stamp and its event is not in {}: an uncertain append whose "
									+ "batch landed late after its number was sealed (or deleted). Sealed again, its tag "
									+ "rows deleted, not delivered", event.persistenceId(), event.sequenceNr(),
									event.timestamp(), this.options.inFlightWait(), this.options.eventsTable());
						}
						return row.offset();
					});
			});
	}

	private CompletionStage<Void> deleteTagRows(TaggedEvent<String> row, long writeTime) {
		PersistentEvent<String> event = row.event();
		long timestamp = row.offset().timestamp();
		List<CompletableFuture<?>> deletes = new ArrayList<>();
		for (String tag : event.tags()) {
			BoundStatement delete = (this.options.tagBucketing() == TagBucketing.NONE)
					? this.deleteTagRow.bind(writeTime, tag, timestamp, event.persistenceId(), event.sequenceNr())
					: this.deleteTagRow.bind(writeTime, tag, this.options.tagBucketing().bucketOf(timestamp), timestamp,
							event.persistenceId(), event.sequenceNr());
			deletes.add(this.session.executeAsync(delete).toCompletableFuture());
			PreparedStatement sliced = this.deleteSlicedTagRow;
			if (sliced != null) {
				int group = TagSlices.groupOf(this.options.sliceHash(), event.persistenceId(),
						this.options.tagSliceGroups());
				BoundStatement copy = (this.options.tagBucketing() == TagBucketing.NONE)
						? sliced.bind(writeTime, tag, group, timestamp, event.persistenceId(), event.sequenceNr())
						: sliced.bind(writeTime, tag, this.options.tagBucketing().bucketOf(timestamp), group, timestamp,
								event.persistenceId(), event.sequenceNr());
				deletes.add(this.session.executeAsync(copy).toCompletableFuture());
			}
		}
		return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new));
	}

}
