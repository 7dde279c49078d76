package io.cassandrajournal.internal;

import java.util.Set;

import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.type.codec.TypeCodec;
import com.datastax.oss.driver.api.core.type.codec.TypeCodecs;

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

	/** @return a {@code text} column, or null */
	public static String text(Row row, int index) {
		return TypeCodecs.TEXT.decode(row.getBytesUnsafe(index), row.protocolVersion());
	}

	/** @return a {@code set<text>} column, empty if null */
	public static Set<String> textSet(Row row, int index) {
		Set<String> set = TEXT_SET.decode(row.getBytesUnsafe(index), row.protocolVersion());
		return (set != null) ? set : Set.of();
	}

}
