package io.cassandrajournal.retention;

import org.jspecify.annotations.Nullable;

/**
 * What a {@link RetentionRunner} found (dry run) or deleted (run), so far or in all. A run stores it as its
 * position after every page of persistenceIds.
 *
 * @param entities persistenceIds visited
 * @param entitiesDeleted entities deleted entirely
 * @param entitiesCut entities whose events before a kept snapshot were (to be) deleted
 * @param events sequence numbers (to be) deleted (a crash gap in a range counts, as it holds no event)
 * @param snapshots snapshots (to be) deleted
 * @param tagBuckets tag index buckets (to be) dropped
 * @param after the last persistenceId done, {@code null} before the first page
 * @param complete whether every entity and the tag buckets are done
 */
public record RetentionReport(long entities, long entitiesDeleted, long entitiesCut, long events, long snapshots,
		long tagBuckets, @Nullable String after, boolean complete) {

	/** Nothing yet. */
	public static final RetentionReport EMPTY = new RetentionReport(0, 0, 0, 0, 0, 0, null, false);

	RetentionReport plus(RetentionReport other) {
		return new RetentionReport(this.entities + other.entities, this.entitiesDeleted + other.entitiesDeleted,
				this.entitiesCut + other.entitiesCut, this.events + other.events, this.snapshots + other.snapshots,
				this.tagBuckets + other.tagBuckets, this.after, this.complete);
	}

	RetentionReport at(@Nullable String position, boolean done) {
		return new RetentionReport(this.entities, this.entitiesDeleted, this.entitiesCut, this.events, this.snapshots,
				this.tagBuckets, position, done);
	}

	/** @return whether anything was (or would be) deleted */
	public boolean deletesSomething() {
		return this.entitiesDeleted + this.entitiesCut + this.events + this.snapshots + this.tagBuckets > 0;
	}

}
