package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.TagPartitions;

/**
 * Where this fits: the tag rows of an append written after its events ({@link AppendWriter}'s events-then-tags
 * path) when the tag index keeps more than one copy of a row (the reference row and the segment-aware one,
 * {@code tag-slice-groups}). The copies of a row go in one logged batch, so Cassandra's batch log applies all of
 * them or none: whole-tag readers and segment feeds agree on every event, also when the write fails for good and
 * the append ends uncertain (review S2 of the segment-aware index: written as separate writes in parallel, one
 * copy could land and the other not, and nothing repaired it). A tag's rows are cut into batches of at most
 * {@link AppendWriter#ATOMIC_BATCH_MAX_BYTES} with all their copies, counted as the node counts them
 * ({@link BatchBytes}). A batch the node still refuses as too large (a {@code batch_size_fail_threshold} below the
 * default) is split in halves, each its own logged batch, down to single rows; only a single row whose copies alone
 * are refused is written as separate copies, and for such a row the copies can disagree after a failure, as before.
 * Every refusal is told to {@link JournalMetrics#tagCopiesBatchRefused}; separate copies are logged at WARN each
 * time, splits at DEBUG.
 */
final class TagCopyWrites {

	private static final Logger logger = LoggerFactory.getLogger(TagCopyWrites.class);

	private final CqlSession session;

	private final TagPartitions tagIndex;

	private final JournalMetrics metrics;

	private final boolean expiring;

	/**
	 * @param session the session
	 * @param tagIndex the tag index, keeping {@link TagPartitions#copies()} copies of a row
	 * @param metrics told about batches refused as too large
	 * @param expiring whether tag rows are written with a TTL
	 */
	TagCopyWrites(CqlSession session, TagPartitions tagIndex, JournalMetrics metrics, boolean expiring) {
		this.session = session;
		this.tagIndex = tagIndex;
		this.metrics = metrics;
		this.expiring = expiring;
	}

	/**
	 * Adds the writes of one tag's rows, one per batch.
	 * @param writes the append's tag writes
	 * @param rows the rows of one tag
	 * @param writeTime the rows' write time stamp
	 * @param configure sets the batch's consistency, timeout, idempotence and write time
	 */
	void add(RowWrites writes, List<TagPartitions.TagRow> rows, long writeTime,
			Function<BatchStatementBuilder, BatchStatement> configure) {
		for (List<TagPartitions.TagRow> batch : batches(rows, this.tagIndex.copies(), this.expiring)) {
			Part part = new Part(batch);
			writes.add(true, () -> write(part, writeTime, configure));
		}
	}

	/**
	 * A batch's rows and what the node said of them, kept across the retries of {@link RowWrites}: a retry sends
	 * the halves (or the separate copies) the first refusal led to.
	 */
	private static final class Part {

		final List<TagPartitions.TagRow> rows;

		volatile @Nullable List<Part> halves;

		volatile boolean separately;

		Part(List<TagPartitions.TagRow> rows) {
			this.rows = rows;
		}

	}

	private CompletionStage<Void> write(Part part, long writeTime,
			Function<BatchStatementBuilder, BatchStatement> configure) {
		if (part.separately) {
			return this.tagIndex.write(part.rows, writeTime);
		}
		List<Part> halves = part.halves;
		if (halves != null) {
			return CompletableFuture.allOf(halves.stream()
				.map((half) -> write(half, writeTime, configure).toCompletableFuture())
				.toArray(CompletableFuture[]::new));
		}
		return logged(part, writeTime, configure);
	}

	private CompletionStage<Void> logged(Part part, long writeTime,
			Function<BatchStatementBuilder, BatchStatement> configure) {
		return this.tagIndex.inserts(part.rows).thenCompose((inserts) -> {
			BatchStatementBuilder builder = BatchStatement.builder(BatchType.LOGGED);
			inserts.forEach(builder::addStatement);
			return this.session.executeAsync(configure.apply(builder));
		}).<CompletionStage<Void>>handle((written, error) -> {
			if (error == null) {
				return CompletableFuture.completedFuture(null);
			}
			if (!AppendWriter.batchTooLarge(error)) {
				return CompletableFuture.failedFuture(error);
			}
			// Refused, so not applied: no copy of these rows exists yet.
			refused(part, Errors.unwrap(error).getMessage());
			return write(part, writeTime, configure);
		}).thenCompose((next) -> next);
	}

	private void refused(Part part, @Nullable String reason) {
		List<TagPartitions.TagRow> rows = part.rows;
		TagPartitions.TagRow first = rows.get(0);
		Object[] values = { rows.size(), first.persistenceId(), first.sequenceNr(), rows.get(rows.size() - 1).sequenceNr(),
				first.tag(), reason };
		if (rows.size() > 1) {
			int middle = rows.size() / 2;
			part.halves = List.of(new Part(rows.subList(0, middle)), new Part(rows.subList(middle, rows.size())));
			this.metrics.tagCopiesBatchRefused(rows.size(), false);
			logger.debug("The copies of {} tag rows of '{}' ({}..{}) under tag '{}' were refused as one logged batch "
					+ "({}); sending them in two halves", values);
		}
		else {
			part.separately = true;
			this.metrics.tagCopiesBatchRefused(1, true);
			logger.warn("The copies of {} tag row of '{}' ({}..{}) under tag '{}' were refused as one logged batch ({}); "
					+ "writing them separately (if that fails, whole-tag readers and segment feeds may disagree on this "
					+ "event; raise batch_size_fail_threshold to keep them together)", values);
		}
	}

	/**
	 * @param rows tag rows
	 * @param copies copies written of each row
	 * @param expiring whether the rows are written with a TTL
	 * @return the rows in order, cut so that each part's rows with all their copies stay under the batch limit
	 */
	static List<List<TagPartitions.TagRow>> batches(List<TagPartitions.TagRow> rows, int copies, boolean expiring) {
		List<List<TagPartitions.TagRow>> batches = new ArrayList<>();
		List<TagPartitions.TagRow> current = new ArrayList<>();
		Set<List<Object>> partitions = new HashSet<>();
		long bytes = 0;
		for (TagPartitions.TagRow row : rows) {
			List<Object> partition = BatchBytes.partitionOf(row);
			long alone = BatchBytes.tagRows(List.of(row), copies, expiring);
			long size = partitions.contains(partition) ? alone - (long) copies * BatchBytes.PARTITION : alone;
			if (!current.isEmpty() && bytes + size > AppendWriter.ATOMIC_BATCH_MAX_BYTES) {
				batches.add(current);
				current = new ArrayList<>();
				partitions.clear();
				bytes = 0;
				size = alone;
			}
			current.add(row);
			partitions.add(partition);
			bytes += size;
		}
		if (!current.isEmpty()) {
			batches.add(current);
		}
		return batches;
	}

}
