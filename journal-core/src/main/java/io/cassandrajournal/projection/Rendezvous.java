package io.cassandrajournal.projection;

import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which instance should own each segment, computed alike by every instance from the same list of live members,
 * without a coordinator: rendezvous (highest random weight) hashing of (projection, segment, member). Each
 * segment goes to the member with the highest weight, so segments spread evenly, a member that leaves only moves
 * its own segments, and a member that joins takes about {@code 1/n} of them from the others. Where this fits:
 * {@link SegmentedProjection} tries to own the segments this names it for, and hands over the others.
 */
final class Rendezvous {

	private Rendezvous() {
	}

	/**
	 * @param projection the projection's name
	 * @param segment the segment's key
	 * @param members the live members, not empty
	 * @return the member that should own the segment
	 */
	static String winner(String projection, String segment, Collection<String> members) {
		String best = null;
		long bestWeight = 0;
		for (String member : members) {
			long weight = weight(projection, segment, member);
			if (best == null || Long.compareUnsigned(weight, bestWeight) > 0
					|| (weight == bestWeight && member.compareTo(best) < 0)) {
				best = member;
				bestWeight = weight;
			}
		}
		if (best == null) {
			throw new IllegalArgumentException("no members to assign segment " + segment + " of " + projection + " to");
		}
		return best;
	}

	/**
	 * @param projection the projection's name
	 * @param segments the segments' keys
	 * @param members the live members, not empty
	 * @return each segment's owner, in the segments' order
	 */
	static Map<String, String> assign(String projection, List<String> segments, Collection<String> members) {
		Map<String, String> owners = new LinkedHashMap<>();
		for (String segment : segments) {
			owners.put(segment, winner(projection, segment, members));
		}
		return owners;
	}

	/** A 64-bit FNV-1a hash of the three names (length-prefixed, so no two triples share an input), mixed. */
	static long weight(String projection, String segment, String member) {
		long hash = 0xcbf29ce484222325L;
		for (String part : new String[] { projection, segment, member }) {
			byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
			hash = mix(hash, bytes.length);
			for (byte b : bytes) {
				hash = mix(hash, b & 0xff);
			}
		}
		// Finalise (SplitMix64) so that inputs differing in one byte give unrelated weights.
		hash ^= hash >>> 30;
		hash *= 0xbf58476d1ce4e5b9L;
		hash ^= hash >>> 27;
		hash *= 0x94d049bb133111ebL;
		return hash ^ (hash >>> 31);
	}

	private static long mix(long hash, int value) {
		return (hash ^ value) * 0x100000001b3L;
	}

}
