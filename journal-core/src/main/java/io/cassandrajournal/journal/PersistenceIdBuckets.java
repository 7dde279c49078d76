package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;

/**
 * Where a persistenceId goes in {@code all_persistence_ids}: under {@code '_all'} (the reference
 * implementation's only partition) when there is one bucket, else under {@code '_all/<hash mod n>'}.
 */
final class PersistenceIdBuckets {

	public static final String REFERENCE_BUCKET = "_all";

	private PersistenceIdBuckets() {
	}

	public static String bucketOf(String persistenceId, int buckets) {
		return (buckets == 1) ? REFERENCE_BUCKET : REFERENCE_BUCKET + "/" + Math.floorMod(persistenceId.hashCode(), buckets);
	}

	/** @return every partition to read: {@code '_all'} always, plus the hash buckets */
	public static List<String> bucketsToRead(int buckets) {
		List<String> all = new ArrayList<>();
		all.add(REFERENCE_BUCKET);
		if (buckets > 1) {
			for (int i = 0; i < buckets; i++) {
				all.add(REFERENCE_BUCKET + "/" + i);
			}
		}
		return all;
	}

}
