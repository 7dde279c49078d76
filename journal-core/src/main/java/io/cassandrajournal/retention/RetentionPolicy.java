package io.cassandrajournal.retention;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;

/**
 * What a {@link RetentionRunner} deletes, immutable; the defaults ({@link #NONE}) delete nothing.
 * <ul>
 * <li>{@link #withKeepSnapshots keep K snapshots}: per entity, the events up to the oldest of its K newest
 * snapshots, and the older snapshots ({@link JournalCleanup#deleteBeforeSnapshot}); entities without a snapshot
 * are left alone.</li>
 * <li>{@link #withTagBucketsOlderThan tag buckets older than}: whole buckets of the bucketed tag index whose time
 * span ended longer ago than this ({@link JournalCleanup#dropTagBuckets}).</li>
 * <li>{@link #withDeleteEntities delete entities}: entities chosen by persistenceId, deleted entirely
 * ({@link JournalCleanup#deleteEntity}).</li>
 * </ul>
 */
public final class RetentionPolicy {

	/** Deletes nothing; the start for withers. */
	public static final RetentionPolicy NONE = new RetentionPolicy(0, null, (id) -> false, 8, 100);

	private final int keepSnapshots;

	private final @Nullable Duration tagBucketsOlderThan;

	private final Predicate<String> deleteEntities;

	private final int parallelism;

	private final int pageSize;

	private RetentionPolicy(int keepSnapshots, @Nullable Duration tagBucketsOlderThan, Predicate<String> deleteEntities,
			int parallelism, int pageSize) {
		this.keepSnapshots = keepSnapshots;
		this.tagBucketsOlderThan = tagBucketsOlderThan;
		this.deleteEntities = deleteEntities;
		this.parallelism = parallelism;
		this.pageSize = pageSize;
	}

	/**
	 * @param keepSnapshots snapshots kept per entity, events up to the oldest kept one deleted; 0 (default) turns
	 * this off
	 * @return a new policy
	 */
	public RetentionPolicy withKeepSnapshots(int keepSnapshots) {
		if (keepSnapshots < 0) {
			throw new IllegalArgumentException("keepSnapshots must be 0 (off) or more, was " + keepSnapshots);
		}
		return new RetentionPolicy(keepSnapshots, this.tagBucketsOlderThan, this.deleteEntities, this.parallelism,
				this.pageSize);
	}

	/**
	 * @param olderThan drop tag index buckets that ended longer ago than this; {@code null} (default) keeps them
	 * @return a new policy
	 */
	public RetentionPolicy withTagBucketsOlderThan(@Nullable Duration olderThan) {
		if (olderThan != null && olderThan.isNegative()) {
			throw new IllegalArgumentException("tagBucketsOlderThan must not be negative, was " + olderThan);
		}
		return new RetentionPolicy(this.keepSnapshots, olderThan, this.deleteEntities, this.parallelism, this.pageSize);
	}

	/**
	 * @param which the entities to delete entirely, by persistenceId (default: none); checked for every id of
	 * {@code all_persistence_ids}, so it must be cheap and must not block
	 * @return a new policy
	 */
	public RetentionPolicy withDeleteEntities(Predicate<String> which) {
		return new RetentionPolicy(this.keepSnapshots, this.tagBucketsOlderThan, Objects.requireNonNull(which, "which"),
				this.parallelism, this.pageSize);
	}

	/**
	 * @param parallelism entities worked on at once, default 8
	 * @return a new policy
	 */
	public RetentionPolicy withParallelism(int parallelism) {
		if (parallelism < 1) {
			throw new IllegalArgumentException("parallelism must be at least 1, was " + parallelism);
		}
		return new RetentionPolicy(this.keepSnapshots, this.tagBucketsOlderThan, this.deleteEntities, parallelism,
				this.pageSize);
	}

	/**
	 * @param pageSize persistenceIds read per page, default 100; the position is stored after each page
	 * @return a new policy
	 */
	public RetentionPolicy withPageSize(int pageSize) {
		if (pageSize < 1) {
			throw new IllegalArgumentException("pageSize must be at least 1, was " + pageSize);
		}
		return new RetentionPolicy(this.keepSnapshots, this.tagBucketsOlderThan, this.deleteEntities, this.parallelism,
				pageSize);
	}

	/** @return snapshots kept per entity, 0 when off */
	public int keepSnapshots() {
		return this.keepSnapshots;
	}

	/** @return the age beyond which tag buckets are dropped, if set */
	public Optional<Duration> tagBucketsOlderThan() {
		return Optional.ofNullable(this.tagBucketsOlderThan);
	}

	/**
	 * @param persistenceId an entity
	 * @return whether the policy deletes it entirely
	 */
	public boolean deletesEntity(String persistenceId) {
		return this.deleteEntities.test(persistenceId);
	}

	/** @return entities worked on at once */
	public int parallelism() {
		return this.parallelism;
	}

	/** @return persistenceIds per page */
	public int pageSize() {
		return this.pageSize;
	}

	@Override
	public String toString() {
		return "RetentionPolicy[keepSnapshots=" + this.keepSnapshots + ", tagBucketsOlderThan="
				+ this.tagBucketsOlderThan + ", parallelism=" + this.parallelism + ", pageSize=" + this.pageSize + "]";
	}

}
