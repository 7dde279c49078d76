package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
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
 * copy could land and the other not, and nothing repaired it). A tag's rows are cut into batches estimated under
 * {@link AppendWriter#ATOMIC_BATCH_MAX_BYTES} with all their copies; a batch the node still refuses as too large (a
 * single row whose copies exceed {@code batch_size_fail_threshold}) is written as separate copies: for such rows the
 * copies can disagree after a failure, as before (logged at WARN the first time, then at DEBUG).
 */
final class TagCopyWrites {

	private static final Logger logger = LoggerFactory.getLogger(TagCopyWrites.class);

	private final CqlSession session;

	private final TagPartitions tagIndex;

	/** Whether a batch refused as too large was logged at WARN already. */
	private final AtomicBoolean warned = new AtomicBoolean();

	/**
	 * @param session the session
	 * @param tagIndex the tag index, keeping {@link TagPartitions#copies()} copies of a row
	 */
	TagCopyWrites(CqlSession session, TagPartitions tagIndex) {
		this.session = session;
		this.tagIndex = tagIndex;
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
		for (List<TagPartitions.TagRow> batch : batches(rows, this.tagIndex.copies())) {
			AtomicBoolean separately = new AtomicBoolean();
			writes.add(true, () -> separately.get() ? this.tagIndex.write(batch, writeTime)
					: logged(batch, writeTime, configure, separately));
		}
	}

	private CompletionStage<Void> logged(List<TagPartitions.TagRow> batch, long writeTime,
			Function<BatchStatementBuilder, BatchStatement> configure, AtomicBoolean separately) {
		return this.tagIndex.inserts(batch).thenCompose((inserts) -> {
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
			separately.set(true);
			TagPartitions.TagRow first = batch.get(0);
			String message = "The copies of the tag rows of '{}' ({}..{}) under tag '{}' were refused as one logged "
					+ "batch ({}); writing them separately (if that fails, whole-tag readers and segment feeds may "
					+ "disagree on these events; raise batch_size_fail_threshold to keep them together)";
			Object[] values = { first.persistenceId(), first.sequenceNr(), batch.get(batch.size() - 1).sequenceNr(),
					first.tag(), Errors.unwrap(error).getMessage() };
			if (this.warned.compareAndSet(false, true)) {
				logger.warn(message + "; further ones at DEBUG", values);
			}
			else {
				logger.debug(message, values);
			}
			return this.tagIndex.write(batch, writeTime);
		}).thenCompose((next) -> next);
	}

	/** @return the rows in order, cut so that each part's rows with all their copies stay under the batch limit */
	static List<List<TagPartitions.TagRow>> batches(List<TagPartitions.TagRow> rows, int copies) {
		List<List<TagPartitions.TagRow>> batches = new ArrayList<>();
		List<TagPartitions.TagRow> current = new ArrayList<>();
		long bytes = 0;
		for (TagPartitions.TagRow row : rows) {
			long size = copies * AppendWriter.estimatedBytes(Map.of(), List.of(row));
			if (!current.isEmpty() && bytes + size > AppendWriter.ATOMIC_BATCH_MAX_BYTES) {
				batches.add(current);
				current = new ArrayList<>();
				bytes = 0;
			}
			current.add(row);
			bytes += size;
		}
		if (!current.isEmpty()) {
			batches.add(current);
		}
		return batches;
	}

}
