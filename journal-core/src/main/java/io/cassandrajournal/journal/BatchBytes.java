package io.cassandrajournal.journal;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.cassandrajournal.internal.TagPartitions;

/**
 * Where this fits: the bytes the node counts against {@code batch_size_fail_threshold} for the rows
 * {@link AppendWriter} and {@link TagCopyWrites} put in one logged batch, as Cassandra 5.0 counts them
 * ({@code BatchStatement.verifyBatchSize}: the sum of {@code PartitionUpdate.dataSize()} over the batch's partitions,
 * keys not counted, clustering values counted). {@code TagCopyBatchIT} compares the tag row estimate with the size
 * the node reports (review of S2: the estimate before undercounted each tag row copy by 15 to 27 bytes, so batches
 * cut at 48 KiB went over 50 KiB on the node and were refused).
 */
final class BatchBytes {

	/** Per partition: its deletion info (8) and its empty static row (liveness 8, row deletion 13). */
	static final int PARTITION = 8 + 8 + 13;

	/** Per row: its primary key liveness (time stamp 8) and its row deletion (deletion time 12, and 1). */
	static final int ROW = 8 + 13;

	/** Per row written with a TTL: the liveness's TTL (4) and expiration time (8). */
	static final int EXPIRING = 4 + 8;

	/** Per cell, before its value: time stamp 8, TTL 4, local deletion time 8 (a long since Cassandra 5.0). */
	static final int CELL = 8 + 4 + 8;

	/** Per set, before a cell per element: its complex deletion (12). */
	static final int SET = 12;

	/** A {@code bigint} value. */
	private static final int BIGINT = 8;

	/** The head update beside the events (metadata: max_sequence_nr and updated_at, a partition of its own). */
	static final long HEAD = PARTITION + ROW + 2 * (CELL + BIGINT);

	private BatchBytes() {
	}

	/**
	 * @param rows tag rows
	 * @param copies copies written of each row ({@link TagPartitions#copies()})
	 * @param expiring whether the rows are written with a TTL
	 * @return the bytes the node counts for every copy of the rows; a partition counted per copy and per distinct
	 * tag, persistenceId and time stamp (each copy's partition depends on no more: exact for one append's rows)
	 */
	static long tagRows(List<TagPartitions.TagRow> rows, int copies, boolean expiring) {
		Set<List<Object>> partitions = new HashSet<>();
		long bytes = 0;
		for (TagPartitions.TagRow row : rows) {
			if (partitions.add(partitionOf(row))) {
				bytes += (long) copies * PARTITION;
			}
			bytes += copies * tagRow(row, expiring);
		}
		return bytes;
	}

	/**
	 * @param row a tag row
	 * @return what decides the partition of each of its copies (tag; bucket: time stamp; slice group: persistenceId)
	 */
	static List<Object> partitionOf(TagPartitions.TagRow row) {
		return List.of(row.tag(), row.persistenceId(), row.timestamp());
	}

	/** One copy of a tag row: clustering (timestamp, persistence_id, sequence_nr), payload, tags. */
	private static long tagRow(TagPartitions.TagRow row, boolean expiring) {
		return BIGINT + utf8Length(row.persistenceId()) + BIGINT + ROW + (expiring ? EXPIRING : 0) + CELL
				+ utf8Length(row.payload()) + tags(row.tags());
	}

	/**
	 * @param payloads the events' serialized payloads
	 * @param tags each event's tags
	 * @param partitions the events partitions written
	 * @param head whether the head update goes in the batch
	 * @return the bytes the node counts for the events rows (and the head)
	 */
	static long events(List<String> payloads, List<Set<String>> tags, int partitions, boolean head) {
		long bytes = (long) partitions * PARTITION + (head ? HEAD : 0);
		for (int i = 0; i < payloads.size(); i++) {
			// Clustering sequence_nr, then timestamp, payload and tags.
			bytes += BIGINT + ROW + CELL + BIGINT + CELL + utf8Length(payloads.get(i)) + tags(tags.get(i));
		}
		return bytes;
	}

	private static long tags(Set<String> tags) {
		long bytes = SET;
		for (String tag : tags) {
			bytes += CELL + utf8Length(tag);
		}
		return bytes;
	}

	static long utf8Length(String text) {
		long length = 0;
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			length += (c < 0x80) ? 1 : (c < 0x800 || Character.isSurrogate(c)) ? 2 : 3;
		}
		return length;
	}

}
