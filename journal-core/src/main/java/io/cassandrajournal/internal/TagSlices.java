package io.cassandrajournal.internal;

import io.cassandrajournal.SliceHash;

/**
 * Which partition of the segment-aware tag index holds a row: the one stable persistenceId slice the projection
 * segments use ({@link SliceHash#slice}, the keyspace's recorded {@code slice-hash}), folded into the table's
 * {@code groups} slice groups ({@code slice * groups / 1024}). Where this fits: the writer, every tag-row delete
 * (deleteTo, an uncertain append's settling, a late row's seal) and the segment reads all ask it, so they agree on
 * where a row lives. A slice group is a contiguous run of {@code 1024 / groups} slices, so a projection segment
 * with {@code n <= groups} segments covers exactly {@code groups / n} groups.
 */
public final class TagSlices {

	/** The number of slices in the hash space. */
	public static final int SLICES = 1024;

	private TagSlices() {
	}

	/**
	 * @param hash the keyspace's slice function
	 * @param persistenceId an entity
	 * @return its slice, 0 to 1023
	 */
	public static int sliceOf(SliceHash hash, String persistenceId) {
		return hash.slice(persistenceId);
	}

	/**
	 * @param hash the keyspace's slice function
	 * @param persistenceId an entity
	 * @param groups the table's slice groups (a power of two, 1 to 1024)
	 * @return the group whose partition holds the entity's tag rows
	 */
	public static int groupOf(SliceHash hash, String persistenceId, int groups) {
		return sliceOf(hash, persistenceId) * groups / SLICES;
	}

	/**
	 * @param fromSlice the first slice, inclusive
	 * @param toSlice the last slice, inclusive
	 * @param groups the table's slice groups
	 * @return the first group holding any of the slices
	 */
	public static int firstGroup(int fromSlice, int toSlice, int groups) {
		return fromSlice * groups / SLICES;
	}

	/**
	 * @param fromSlice the first slice, inclusive
	 * @param toSlice the last slice, inclusive
	 * @param groups the table's slice groups
	 * @return the last group holding any of the slices
	 */
	public static int lastGroup(int fromSlice, int toSlice, int groups) {
		return toSlice * groups / SLICES;
	}

	/**
	 * @param groups a count to check
	 * @return whether it is a valid number of slice groups: 0 (off) or a power of two from 2 to 1024
	 */
	public static boolean validGroups(int groups) {
		return groups == 0 || (groups >= 2 && groups <= SLICES && Integer.bitCount(groups) == 1);
	}

}
