package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.List;

import io.cassandrajournal.internal.TagSlices;

/**
 * A contiguous range of the fixed hash space that splits a projection over instances: every persistenceId
 * falls in one of {@value #SLICES} slices by the keyspace's slice function ({@link io.cassandrajournal.SliceHash},
 * recorded with the layout; the read journal's {@link io.cassandrajournal.query.ReadJournal#sliceOf}). An entity
 * never changes slice, so a segment that owns a range sees all of an entity's events, in order.
 * <p>
 * Segment counts are powers of two from 1 to 1024, so the ranges of {@code 2n} segments split those of
 * {@code n} exactly: scaling from 4 to 8 segments halves each range, and each half starts from its parent's
 * cursor; scaling back merges two ranges and takes the lower of their cursors (at-least-once).
 *
 * @param from the first slice, inclusive
 * @param to the last slice, inclusive
 */
record SliceRange(int from, int to) {

	/** The number of slices in the hash space. */
	static final int SLICES = TagSlices.SLICES;

	SliceRange {
		if (from < 0 || to >= SLICES || from > to) {
			throw new IllegalArgumentException("Slice range " + from + "-" + to + " is not within 0-" + (SLICES - 1));
		}
	}

	/**
	 * @param segments a power of two from 1 to 1024
	 * @return that many ranges of equal size covering every slice, lowest first
	 */
	static List<SliceRange> split(int segments) {
		if (segments < 1 || segments > SLICES || Integer.bitCount(segments) != 1) {
			throw new IllegalArgumentException("A projection's segments must be a power of two from 1 to " + SLICES
					+ " (so that more segments split today's ranges exactly), not " + segments);
		}
		int size = SLICES / segments;
		List<SliceRange> ranges = new ArrayList<>(segments);
		for (int start = 0; start < SLICES; start += size) {
			ranges.add(new SliceRange(start, start + size - 1));
		}
		return ranges;
	}

	/**
	 * @param key a range as {@link #key()} writes it
	 * @return the range
	 */
	static SliceRange parse(String key) {
		int dash = key.indexOf('-');
		if (dash < 1) {
			throw new IllegalArgumentException("Not a slice range: '" + key + "' (expected <from>-<to>)");
		}
		return new SliceRange(Integer.parseInt(key.substring(0, dash)), Integer.parseInt(key.substring(dash + 1)));
	}

	/**
	 * @param slice an entity's slice (one function for the segments and the segment-aware tag index's partitions:
	 * the read journal's)
	 * @return whether the range holds it
	 */
	boolean contains(int slice) {
		return slice >= this.from && slice <= this.to;
	}

	boolean covers(SliceRange other) {
		return this.from <= other.from && other.to <= this.to;
	}

	/** @return the range's name in lease rows and cursor keys, {@code <from>-<to>} */
	String key() {
		return this.from + "-" + this.to;
	}

}
