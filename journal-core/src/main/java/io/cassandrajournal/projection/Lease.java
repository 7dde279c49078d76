package io.cassandrajournal.projection;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One row of the lease table as last read or written: who owns a projection's segment, under which epoch, and
 * the owner's latest heartbeat value (a random number each renewal writes, so that a contender can tell a live
 * owner from a dead one without comparing clocks across machines).
 *
 * @param projection the projection's name
 * @param segment the segment's key, for example a {@link SliceRange#key()}
 * @param owner the owning instance, {@code null} once released
 * @param epoch raised by one at every change of owner, never lowered
 * @param beat the value of the owner's latest renewal
 */
record Lease(String projection, String segment, @Nullable String owner, long epoch, long beat) {

	Lease {
		Objects.requireNonNull(projection, "projection");
		Objects.requireNonNull(segment, "segment");
	}

	boolean heldBy(String instance) {
		return instance.equals(this.owner);
	}

	boolean sameTerm(Lease other) {
		return this.epoch == other.epoch && this.beat == other.beat && Objects.equals(this.owner, other.owner);
	}

}
