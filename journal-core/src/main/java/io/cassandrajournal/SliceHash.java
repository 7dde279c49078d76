package io.cassandrajournal;

import java.nio.charset.StandardCharsets;

/**
 * Which function puts a persistenceId in one of the 1024 slices that projection segments and the segment-aware
 * tag index ({@code tag-slice-groups}) split entities by. The function is part of the keyspace's layout: it
 * decides which segment's cursor covers an entity and which partition of the sliced tag table holds its rows, so
 * it is recorded with the layout on the first start and an instance with another one is refused (see
 * {@link io.cassandrajournal.journal.CassandraJournal#verifyLayout}).
 * <p>
 * Both are easy to compute in any language. {@link #MURMUR3} spreads ids that differ only in a counted suffix
 * ({@code account-1}, {@code account-2}, ...) evenly; {@link #STRING_HASH} puts such ids in neighbouring slices
 * (100 sequential ids fall in 6 of 16 segments), which matters while a keyspace has fewer than a few thousand
 * entities. The measurements are in {@code docs/design-next.md} ("The slice function").
 */
public enum SliceHash {

	/**
	 * {@code |persistenceId.hashCode() % 1024|}: Java's {@code String.hashCode} (31-based, over UTF-16 code units,
	 * 32-bit wrap-around), the function Akka's slices use. The function of every keyspace whose layout was recorded
	 * before the choice existed (a record without {@code slice-hash}).
	 */
	STRING_HASH,

	/**
	 * {@code murmur3_32(UTF-8 bytes of the persistenceId, seed 0) & 1023}: the x86 32-bit MurmurHash3 (Guava's
	 * {@code Hashing.murmur3_32_fixed()}, the {@code murmurhash3js} and {@code murmurhash} npm packages), its low ten
	 * bits. The default for a new keyspace.
	 */
	MURMUR3;

	/** The number of slices in the hash space. */
	private static final int SLICES = 1024;

	/**
	 * @param persistenceId an entity
	 * @return its slice, 0 to 1023
	 */
	public int slice(String persistenceId) {
		return switch (this) {
			case STRING_HASH -> Math.abs(persistenceId.hashCode() % SLICES);
			case MURMUR3 -> murmur3(persistenceId.getBytes(StandardCharsets.UTF_8)) & (SLICES - 1);
		};
	}

	/** MurmurHash3 x86 32-bit, seed 0. */
	static int murmur3(byte[] data) {
		int h = 0;
		int blocks = data.length / 4;
		for (int i = 0; i < blocks; i++) {
			int at = i * 4;
			int k = (data[at] & 0xff) | (data[at + 1] & 0xff) << 8 | (data[at + 2] & 0xff) << 16
					| (data[at + 3] & 0xff) << 24;
			h ^= mixK(k);
			h = Integer.rotateLeft(h, 13) * 5 + 0xe6546b64;
		}
		int tail = blocks * 4;
		int k = 0;
		switch (data.length & 3) {
			case 3:
				k ^= (data[tail + 2] & 0xff) << 16;
				// fall through
			case 2:
				k ^= (data[tail + 1] & 0xff) << 8;
				// fall through
			case 1:
				k ^= data[tail] & 0xff;
				h ^= mixK(k);
				break;
			default:
				break;
		}
		h ^= data.length;
		h ^= h >>> 16;
		h *= 0x85ebca6b;
		h ^= h >>> 13;
		h *= 0xc2b2ae35;
		h ^= h >>> 16;
		return h;
	}

	private static int mixK(int k) {
		return Integer.rotateLeft(k * 0xcc9e2d51, 15) * 0x1b873593;
	}

}
