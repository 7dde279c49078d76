package io.cassandrajournal.retention;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.AppendValidation;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.DroppedBucketMarks;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.CassandraJournal;

/**
 * Deletes what a long-lived journal no longer needs: a whole entity, the events before a kept snapshot, old
 * buckets of the bucketed tag index. Every operation is idempotent (a re-run after a failure or a completed run
 * deletes what is left, and nothing else) and bounded by what is stored. Events always go through
 * {@link CassandraJournal#deleteTo}, so its guarantees hold: tag index rows are deleted before their events (in
 * every layout the journal writes), numbers claimed by an append still in flight are waited for, and the
 * deletion mark keeps the consistency check from reporting the range as lost.
 * <p>
 * <b>Concurrent appends.</b> {@link #deleteEntity} deletes the events up to the head it read first, then
 * removes the head with a lightweight transaction conditional on that head. If another writer appended in
 * between, the condition fails, nothing else is deleted, and the result says so ({@link EntityDeletion#removed()}
 * false): the entity then holds only the events appended after the cut, as after a {@code deleteTo}. A writer
 * whose expected head was removed gets a concurrency conflict; an entity created again after its removal starts
 * at sequence number 1 and keeps its new id row, snapshots and marks (only rows up to the removed head are
 * deleted). {@link #deleteBeforeSnapshot} never races with appends: it deletes only up to a snapshot, which
 * is at or below the head.
 * <p>
 * Tombstones: see README "Retention". Create one per application with {@link #create}; it is thread-safe.
 */
public final class JournalCleanup {

	private final CqlSession session;

	private final CassandraJournal journal;

	private final CassandraJournalOptions options;

	private final CleanupStatements statements;

	/** With a bucketed tag index whose bucket list exists. */
	private final @Nullable DroppedBucketMarks dropMarks;

	private JournalCleanup(CqlSession session, CassandraJournal journal) {
		this.session = session;
		this.journal = journal;
		this.options = journal.options();
		this.statements = new CleanupStatements(session, this.options);
		this.dropMarks = (this.statements.deleteBucketListed != null) ? new DroppedBucketMarks(session, this.options)
				: null;
	}

	/**
	 * @param session an open session
	 * @param journal the journal whose keyspace is cleaned (its options name the tables)
	 * @return a ready cleanup; tables that do not exist (snapshots, durable state) are left out
	 */
	public static JournalCleanup create(CqlSession session, CassandraJournal journal) {
		return new JournalCleanup(Objects.requireNonNull(session, "session"), Objects.requireNonNull(journal, "journal"));
	}

	/** @return the journal this cleanup deletes from */
	public CassandraJournal journal() {
		return this.journal;
	}

	/**
	 * Deletes an entity entirely: its events and their tag index rows, then its head (conditionally, see the class
	 * description), then its snapshots up to that head, its durable state row (same persistenceId), the journal's
	 * deletion marks and its {@code all_persistence_ids} row.
	 * @param persistenceId the entity
	 * @return what was deleted
	 */
	public CompletionStage<EntityDeletion> deleteEntity(String persistenceId) {
		CompletionStage<EntityDeletion> invalid = AppendValidation
			.failure(() -> AppendValidation.checkPersistenceId(persistenceId));
		if (invalid != null) {
			return invalid;
		}
		return Errors.translating(this.journal.highestSequenceNr(persistenceId).thenCompose((head) -> {
			if (head == 0) {
				// Unknown, or removed by an earlier call that failed after the head: delete what is left.
				return removeRest(persistenceId, Long.MAX_VALUE)
					.thenApply((ignored) -> new EntityDeletion(persistenceId, 0, true, 0));
			}
			return this.journal.deleteTo(persistenceId, head)
				.thenCompose((ignored) -> this.session.executeAsync(this.statements.deleteHeadIf.bind(persistenceId, head)))
				.thenCompose((rs) -> {
					if (!rs.wasApplied()) {
						Row current = rs.one();
						long now = (current != null && !current.isNull("max_sequence_nr"))
								? current.getLong("max_sequence_nr") : 0;
						return CompletableFuture.completedFuture(new EntityDeletion(persistenceId, head, false, now));
					}
					return removeRest(persistenceId, head)
						.thenApply((ignored) -> new EntityDeletion(persistenceId, head, true, 0));
				});
		}), "Deleting entity", persistenceId);
	}

	/** Everything but events and head, up to {@code upTo} where rows are numbered. */
	private CompletionStage<Void> removeRest(String persistenceId, long upTo) {
		List<CompletableFuture<?>> deletes = new ArrayList<>();
		if (this.statements.deleteSnapshotsUpTo != null) {
			deletes.add(execute(this.statements.deleteSnapshotsUpTo.bind(persistenceId, upTo)));
		}
		if (this.statements.deleteDurableState != null) {
			deletes.add(execute(this.statements.deleteDurableState.bind(persistenceId)));
		}
		deletes.add(execute(this.statements.deleteMarksUpTo.bind(persistenceId, upTo)));
		for (String bucket : idBuckets(persistenceId)) {
			deletes.add(execute(this.statements.deleteIdRow.bind(bucket, persistenceId)));
		}
		return CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new))
			// An append that created the entity again after the head went may have written its id row before
			// ours was deleted: put it back.
			.thenCompose((ignored) -> this.journal.highestSequenceNr(persistenceId))
			.thenCompose((head) -> (head == 0) ? CompletableFuture.completedFuture(null)
					: execute(this.statements.insertIdRow.bind(idBuckets(persistenceId).get(0), persistenceId)))
			.thenApply((ignored) -> null);
	}

	/** The id row's partition first (as the journal writes it), then the reference's {@code '_all'}. */
	private List<String> idBuckets(String persistenceId) {
		int buckets = this.options.persistenceIdBuckets();
		return (buckets == 1) ? List.of("_all")
				: List.of("_all/" + Math.floorMod(persistenceId.hashCode(), buckets), "_all");
	}

	/**
	 * A dry run of {@link #deleteBeforeSnapshot}: reads the entity's snapshots and deletion mark, deletes nothing.
	 * @param persistenceId the entity
	 * @param keepSnapshots how many of the newest snapshots to keep, at least 1
	 * @return the cut
	 */
	public CompletionStage<SnapshotCut> planSnapshotCut(String persistenceId, int keepSnapshots) {
		if (keepSnapshots < 1) {
			return CompletableFuture
				.failedFuture(new IllegalArgumentException("keepSnapshots must be at least 1, was " + keepSnapshots));
		}
		PreparedStatement list = this.statements.snapshotSequenceNrs;
		if (list == null) {
			return CompletableFuture.completedFuture(new SnapshotCut(persistenceId, 0, 0, 0, 0));
		}
		List<Long> sequenceNrs = new ArrayList<>();
		CompletableFuture<Void> read = AsyncPaging
			.forEachRow(this.session.executeAsync(list.bind(persistenceId)), (row) -> sequenceNrs.add(row.getLong(0)))
			.toCompletableFuture();
		CompletableFuture<Long> mark = this.session.executeAsync(this.statements.latestMark.bind(persistenceId))
			.thenApply((rs) -> {
				Row row = rs.one();
				return (row != null) ? row.getLong(0) : 0L;
			})
			.toCompletableFuture();
		return Errors.translating(read.thenCombine(mark, (ignored, deletedTo) -> {
			if (sequenceNrs.isEmpty()) {
				return new SnapshotCut(persistenceId, 0, deletedTo, 0, 0);
			}
			// Newest first (the table's clustering order).
			int kept = Math.min(keepSnapshots, sequenceNrs.size());
			return new SnapshotCut(persistenceId, sequenceNrs.get(kept - 1), deletedTo, sequenceNrs.size() - kept, kept);
		}), "Planning the snapshot cut of", persistenceId);
	}

	/**
	 * Keeps the newest {@code keepSnapshots} snapshots and deletes the events up to the oldest kept one (with
	 * {@link CassandraJournal#deleteTo}), then the older snapshots. An entity without snapshots is left as it is.
	 * Only for entities that load from snapshots: their replay then starts at a kept snapshot.
	 * @param persistenceId the entity
	 * @param keepSnapshots how many of the newest snapshots to keep, at least 1
	 * @return the cut as planned before deleting (re-run: nothing left to delete)
	 */
	public CompletionStage<SnapshotCut> deleteBeforeSnapshot(String persistenceId, int keepSnapshots) {
		return planSnapshotCut(persistenceId, keepSnapshots).thenCompose((cut) -> {
			if (cut.cutTo() == 0) {
				return CompletableFuture.completedFuture(cut);
			}
			CompletionStage<Void> events = (cut.events() > 0) ? this.journal.deleteTo(persistenceId, cut.cutTo())
					: CompletableFuture.completedFuture(null);
			PreparedStatement older = this.statements.deleteSnapshotsBelow;
			return events
				.thenCompose((ignored) -> (cut.snapshotsDeleted() == 0 || older == null)
						? CompletableFuture.completedFuture(null) : execute(older.bind(persistenceId, cut.cutTo())))
				.thenApply((ignored) -> cut);
		});
	}

	/**
	 * A dry run of {@link #dropTagBuckets}: the buckets of the bucketed tag index that end at or before
	 * {@code before}, for every tag in the bucket list.
	 * @param before buckets whose whole time span lies before this instant
	 * @return the buckets, by tag then time; empty without a bucketed tag index
	 */
	public CompletionStage<List<TagBucket>> planTagBuckets(Instant before) {
		PreparedStatement tags = this.statements.tagsWithBuckets;
		PreparedStatement buckets = this.statements.bucketsBefore;
		if (tags == null || buckets == null) {
			return CompletableFuture.completedFuture(List.of());
		}
		TagBucketing bucketing = this.options.tagBucketing();
		// A bucket starting at or after this one ends after 'before'.
		long firstKept = bucketing.bucketOf(before.toEpochMilli());
		List<String> tagNames = new ArrayList<>();
		List<TagBucket> found = new ArrayList<>();
		return Errors.translating(AsyncPaging
			.forEachRow(this.session.executeAsync(tags.bind()), (row) -> tagNames.add(row.getString(0)))
			.thenCompose((ignored) -> collectBuckets(tagNames, 0, buckets, firstKept, found))
			.thenApply((ignored) -> List.copyOf(found)), "Listing tag buckets before", before.toString());
	}

	private CompletionStage<Void> collectBuckets(List<String> tags, int index, PreparedStatement buckets, long firstKept,
			List<TagBucket> found) {
		if (index == tags.size()) {
			return CompletableFuture.completedFuture(null);
		}
		String tag = tags.get(index);
		return AsyncPaging
			.forEachRow(this.session.executeAsync(buckets.bind(tag, firstKept)),
					(row) -> found.add(new TagBucket(tag, Instant.ofEpochMilli(row.getLong(0)))))
			.thenCompose((ignored) -> collectBuckets(tags, index + 1, buckets, firstKept, found));
	}

	/**
	 * Drops whole buckets of the bucketed tag index: one partition deletion each (a single tombstone, not one per
	 * row), then the bucket's entry in the bucket list. The events stay in the journal; a tag query or tag
	 * projection reading from before the newest dropped bucket no longer sees their events. Before dropping a tag's
	 * buckets, records how far they reach (the end of its newest dropped bucket; {@link DroppedBucketMarks}), so a
	 * tag projection whose cursor lies before it reports the dropped range (docs/reliability.md, finding 19). The mark
	 * goes first: a drop that fails part-way may be reported before it completes, never missed silently. With
	 * {@code tag-slice-groups}, the bucket's sliced copies go with its data: its partition of every slice group.
	 * @param buckets the buckets, as {@link #planTagBuckets} lists them
	 * @return completes when dropped
	 */
	public CompletionStage<Void> dropTagBuckets(List<TagBucket> buckets) {
		PreparedStatement data = this.statements.deleteBucketData;
		PreparedStatement listed = this.statements.deleteBucketListed;
		DroppedBucketMarks marks = this.dropMarks;
		if (buckets.isEmpty()) {
			return CompletableFuture.completedFuture(null);
		}
		if (data == null || listed == null || marks == null) {
			return CompletableFuture.failedFuture(
					new IllegalStateException("no bucketed tag index (tag-bucketing is NONE or the tag index is off)"));
		}
		Map<String, Instant> reach = new LinkedHashMap<>();
		Duration size = this.options.tagBucketing().size();
		for (TagBucket bucket : buckets) {
			reach.merge(bucket.tag(), bucket.start().plus(size), (a, b) -> a.isAfter(b) ? a : b);
		}
		Map<String, CompletableFuture<Void>> marked = new LinkedHashMap<>();
		reach.forEach((tag, before) -> marked.put(tag, marks.mark(tag, before).toCompletableFuture()));
		List<CompletableFuture<?>> drops = new ArrayList<>(buckets.size());
		for (TagBucket bucket : buckets) {
			long start = bucket.start().toEpochMilli();
			// Mark, then data: a failure leaves a listed bucket that reads empty, never rows no list finds.
			drops.add(marked.get(bucket.tag())
				.thenCompose((ignored) -> dropData(data, bucket.tag(), start))
				.thenCompose((ignored) -> execute(listed.bind(bucket.tag(), start))));
		}
		return Errors.translating(CompletableFuture.allOf(drops.toArray(CompletableFuture[]::new)),
				"Dropping tag buckets of", buckets.get(0).tag());
	}

	/**
	 * {@link #planTagBuckets} then {@link #dropTagBuckets}.
	 * @param before buckets whose whole time span lies before this instant
	 * @return the buckets dropped
	 */
	public CompletionStage<List<TagBucket>> dropTagBucketsBefore(Instant before) {
		return planTagBuckets(before).thenCompose((buckets) -> dropTagBuckets(buckets).thenApply((ignored) -> buckets));
	}

	/** A bucket's partition, and its sliced copies' partitions (one per slice group) when there are any. */
	private CompletableFuture<@Nullable Void> dropData(PreparedStatement data, String tag, long start) {
		PreparedStatement sliced = this.statements.deleteBucketSliced;
		if (sliced == null) {
			return execute(data.bind(tag, start));
		}
		List<Integer> groups = java.util.stream.IntStream.range(0, this.options.tagSliceGroups()).boxed().toList();
		return execute(data.bind(tag, start)).thenCombine(execute(sliced.bind(tag, start, groups)), (a, b) -> null);
	}

	private CompletableFuture<@Nullable Void> execute(com.datastax.oss.driver.api.core.cql.BoundStatement statement) {
		return this.session.executeAsync(statement).thenApply((rs) -> (Void) null).toCompletableFuture();
	}

}
