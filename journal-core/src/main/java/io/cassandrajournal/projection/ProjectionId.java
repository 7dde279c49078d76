package io.cassandrajournal.projection;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;

/**
 * A projection's cursor identity: its name plus what it reads, the canonical tag filter or the
 * persistenceId. Renaming either starts a new cursor (from the beginning). It also makes the offsets an
 * operator may reset each kind to ({@link #offsetFromTimestamp}, {@link #offsetFromSequenceNr}).
 *
 * <p>
 * A projection split into segments ({@link ProjectionSettings#segments()} above 1) keeps one cursor per segment
 * under the key {@code segment(<from>-<to>):<key>}, for example {@code segment(0-127):orders}. It cannot collide
 * with another projection's key: a plain tag contains no {@code (}, a filter's canonical text starts with
 * {@code any(}, {@code all(}, {@code not(} or is {@code *}, and a persistenceId key starts with {@code pid:}.
 * With one segment the key stays the projection's own.
 *
 * @param name the projection's name
 * @param key the canonical tag filter, or {@code pid:} plus the persistenceId, or a segment's key
 */
public record ProjectionId(String name, String key) {

	private static final String PERSISTENCE_ID_KEY = "pid:";

	public ProjectionId {
		Objects.requireNonNull(name, "name");
		Objects.requireNonNull(key, "key");
		if (name.isBlank()) {
			throw new IllegalArgumentException("projection name must not be blank");
		}
	}

	/**
	 * @param name the projection's name
	 * @param filter what it reads
	 * @return the identity of a by-tag projection
	 */
	public static ProjectionId byTag(String name, TagFilter filter) {
		return new ProjectionId(name, filter.canonical());
	}

	/**
	 * @param name the projection's name
	 * @param persistenceId the entity it reads
	 * @return the identity of a by-persistenceId projection
	 */
	public static ProjectionId byPersistenceId(String name, String persistenceId) {
		return new ProjectionId(name, PERSISTENCE_ID_KEY + persistenceId);
	}

	/**
	 * @param range a segment's slices
	 * @return the cursor identity of that segment of this projection
	 */
	ProjectionId segment(SliceRange range) {
		return new ProjectionId(this.name, "segment(" + range.key() + "):" + this.key);
	}

	/** @return the persistenceId a by-persistenceId projection reads, or {@code null} for a by-tag one */
	public @Nullable String persistenceId() {
		return this.key.startsWith(PERSISTENCE_ID_KEY) ? this.key.substring(PERSISTENCE_ID_KEY.length()) : null;
	}

	/**
	 * @param epochMillis the time stamp of the first event to read again
	 * @return the offset of a by-tag projection that resumes with the events stamped at or after it
	 * @throws IllegalArgumentException for a by-persistenceId projection, or a negative time stamp
	 */
	public TagOffset offsetFromTimestamp(long epochMillis) {
		String persistenceId = persistenceId();
		if (persistenceId != null) {
			throw new IllegalArgumentException("Projection '" + this.name + "' reads the events of " + persistenceId
					+ " by sequence number: reset it with fromSequenceNr, not fromTimestamp");
		}
		if (epochMillis < 0) {
			throw new IllegalArgumentException("fromTimestamp must not be negative, was " + epochMillis);
		}
		return new TagOffset(Math.max(0, epochMillis - 1), "", Long.MAX_VALUE);
	}

	/**
	 * @param sequenceNr the first sequence number to read again, at least 1
	 * @return the offset of a by-persistenceId projection that resumes with that event
	 * @throws IllegalArgumentException for a by-tag projection, or a sequence number below 1
	 */
	public TagOffset offsetFromSequenceNr(long sequenceNr) {
		String persistenceId = persistenceId();
		if (persistenceId == null) {
			throw new IllegalArgumentException("Projection '" + this.name + "' reads by tag: reset it with "
					+ "fromTimestamp (epoch milliseconds), not fromSequenceNr");
		}
		if (sequenceNr < 1) {
			throw new IllegalArgumentException("fromSequenceNr must be at least 1, was " + sequenceNr);
		}
		return new TagOffset(0, persistenceId, sequenceNr - 1);
	}

	@Override
	public String toString() {
		return this.name + "[" + this.key + "]";
	}

}
