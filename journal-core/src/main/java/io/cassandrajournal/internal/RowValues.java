package io.cassandrajournal.internal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Set;

import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.type.codec.TypeCodec;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;
import org.jspecify.annotations.Nullable;

/**
 * Reads the columns of the read paths' rows by position with the codec of the column's known type, for the
 * per-row hot paths (replays, tag walks): {@code row.getString(i)} and friends look the codec up in the
 * registry on every call, and {@code getSet(i, String.class)} also builds its generic type by reflection,
 * which showed in the tag walk's profile. The columns are those of our own prepared SELECTs, whose types the
 * schema fixes. Nulls read as the getters read them: 0, {@code null}, the empty set.
 */
public final class RowValues {

	private static final TypeCodec<Set<String>> TEXT_SET = TypeCodecs.setOf(TypeCodecs.TEXT);

	private RowValues() {
	}

	/** @return a {@code bigint} column, 0 if null */
	public static long bigint(Row row, int index) {
		return TypeCodecs.BIGINT.decodePrimitive(row.getBytesUnsafe(index), row.protocolVersion());
	}

	/**
	 * Decodes the UTF-8 bytes straight into a string, as {@link #textSet} does for each element: the driver's codec
	 * goes through a {@code CharsetDecoder} with a char buffer and a byte buffer view per value (about 600 bytes per
	 * event for the persistenceId and the payload in the projection's profile, docs/benchmarks.md, "P, 2026-12-02
	 * evening"). Cassandra validates {@code text} as UTF-8 on write. {@code new String} replaces invalid UTF-8 with
	 * U+FFFD where the driver's codec failed: a string that holds U+FFFD is decoded again by the driver's codec, which
	 * throws for invalid bytes and returns the same string for a genuine U+FFFD (a persistenceId altered by the
	 * replacement would name another entity and break the UTF-8 order of tag offsets).
	 * @return a {@code text} column, or null
	 * @throws IllegalArgumentException if the column is not valid UTF-8 (as the driver's codec)
	 */
	public static @Nullable String text(Row row, int index) {
		return text(row.getBytesUnsafe(index), row.protocolVersion());
	}

	/**
	 * @param bytes a serialized {@code text}, or null
	 * @param version the protocol version it was read with
	 * @return the string, or null
	 */
	static @Nullable String text(@Nullable ByteBuffer bytes, ProtocolVersion version) {
		if (bytes == null) {
			return null;
		}
		String text = utf8(bytes, bytes.position(), bytes.remaining());
		return (text.indexOf('\uFFFD') < 0) ? text : TypeCodecs.TEXT.decode(bytes, version);
	}

	/**
	 * Decodes the set straight into an immutable set: the driver's codec builds a {@code LinkedHashSet}, which
	 * {@code PersistentEvent} then copied through a {@code HashSet} into an immutable one (about 700 bytes per
	 * event of one tag in the projection's profile, docs/benchmarks.md, "Profiles"). An immutable set passes
	 * {@code Set.copyOf} as it is.
	 * Invalid UTF-8 fails as in {@link #text}.
	 * @return a {@code set<text>} column, immutable, empty if null
	 * @throws IllegalArgumentException if an element is not valid UTF-8 (as the driver's codec)
	 */
	public static Set<String> textSet(Row row, int index) {
		return textSet(row.getBytesUnsafe(index), row.protocolVersion());
	}

	/**
	 * @param bytes a serialized {@code set<text>}, or null
	 * @param version the protocol version it was read with
	 * @return the set, immutable, empty if null
	 */
	static Set<String> textSet(@Nullable ByteBuffer bytes, ProtocolVersion version) {
		if (bytes == null || bytes.remaining() == 0) {
			return Set.of();
		}
		// Protocol v3 and later (the driver's minimum): an int count, then each element as an int length and
		// its UTF-8 bytes.
		int position = bytes.position();
		int count = bytes.getInt(position);
		position += 4;
		if (count < 0 || count > bytes.remaining() / 4) {
			return fallback(bytes, version);
		}
		String[] values = new String[count];
		for (int i = 0; i < count; i++) {
			int length = bytes.getInt(position);
			position += 4;
			if (length < 0 || position + length > bytes.limit()) {
				return fallback(bytes, version);
			}
			values[i] = utf8(bytes, position, length);
			if (values[i].indexOf('\uFFFD') >= 0) {
				// Invalid UTF-8 or a genuine U+FFFD: the driver's codec throws for the first, as text() does.
				return fallback(bytes, version);
			}
			position += length;
		}
		return switch (count) {
			case 0 -> Set.of();
			case 1 -> Set.of(values[0]);
			default -> setOf(values);
		};
	}

	/** @return the values as an immutable set ({@code Set.copyOf} would go through a {@code HashSet}) */
	private static Set<String> setOf(String[] values) {
		try {
			return Set.of(values);
		}
		catch (IllegalArgumentException duplicates) {
			// A set column holds none; should one come, keep each value once.
			return Set.copyOf(Arrays.asList(values));
		}
	}

	private static String utf8(ByteBuffer bytes, int position, int length) {
		if (bytes.hasArray()) {
			return new String(bytes.array(), bytes.arrayOffset() + position, length, StandardCharsets.UTF_8);
		}
		byte[] copy = new byte[length];
		bytes.get(position, copy);
		return new String(copy, StandardCharsets.UTF_8);
	}

	/** The driver's codec, for a value this decoder does not expect. */
	private static Set<String> fallback(ByteBuffer bytes, ProtocolVersion version) {
		Set<String> set = TEXT_SET.decode(bytes, version);
		return (set != null) ? Set.copyOf(set) : Set.of();
	}

}
