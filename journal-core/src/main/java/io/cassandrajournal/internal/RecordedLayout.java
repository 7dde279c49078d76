package io.cassandrajournal.internal;

import java.util.Map;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalSchemaException;
import io.cassandrajournal.SliceHash;

/**
 * Where this fits: the layout settings an instance may leave unset and take from the keyspace's layout record
 * ({@code <eventsTable>_layout}, written and checked by the journal's {@code LayoutRecord}): today
 * {@code slice-hash}. The journal's factories ({@code CassandraJournal.create}, {@code CassandraReadJournal.create},
 * {@code TagIndexBackfill.create}) pass their options through {@link #adopt} before building anything that puts an
 * entity in a slice, so an instance upgraded from a version before {@code slice-hash} keeps the keyspace's
 * {@code string-hash} without being told. Options returned by {@code verifyLayout} set the function, so
 * {@link #adopt} reads nothing for them: a start that verifies first reads the record once.
 */
public final class RecordedLayout {

	/** The record's one row. */
	public static final String KEY = "layout";

	/** The record's key of the slice function. */
	public static final String SLICE_HASH = "slice-hash";

	/**
	 * What a record written before {@code slice-hash} existed means by its absence: those versions put entities in
	 * slices with {@code String.hashCode}.
	 */
	public static final SliceHash RECORDED_BEFORE_SLICE_HASH = SliceHash.STRING_HASH;

	private RecordedLayout() {
	}

	/**
	 * @param options the journal options
	 * @return the layout record's table, {@code <eventsTable>_layout}
	 */
	public static String tableName(CassandraJournalOptions options) {
		return CqlNames.check("eventsTable + '_layout' (the layout record)", options.eventsTable() + "_layout");
	}

	/**
	 * @param options the journal options
	 * @return the options, with the keyspace's recorded slice function when theirs is unset: the record's value,
	 * {@link #RECORDED_BEFORE_SLICE_HASH} for a record that lacks it; unchanged when the function is set or no
	 * record exists yet (a new keyspace: {@link CassandraJournalOptions#sliceHash()}'s default, which the first
	 * {@code verifyLayout} records)
	 * @throws JournalSchemaException if the record holds a function this version does not know
	 */
	public static CassandraJournalOptions adopt(CqlSession session, CassandraJournalOptions options) {
		if (options.configuredSliceHash().isPresent()) {
			return options;
		}
		String keyspace = options.requireKeyspace();
		String table = tableName(options);
		// Asked of the node, not of the driver's schema metadata, which may be off, filtered or stale: a missed
		// record would silently put an upgraded keyspace's entities in other slices.
		boolean exists = session.execute(SimpleStatement
			.newInstance("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
					keyspace, table)
			.setIdempotent(true)).one() != null;
		if (!exists) {
			return options;
		}
		// A serial read, as the record's check reads it: a record just written by another instance is seen.
		Row row = session.execute(new JournalStatements.Statements(session, options)
			.serialRead("SELECT settings FROM " + keyspace + "." + table + " WHERE id = ?")
			.bind(KEY)).one();
		if (row == null) {
			return options;
		}
		Map<String, String> settings = row.getMap("settings", String.class, String.class);
		return options.withSliceHash(sliceHash(keyspace + "." + table, settings.get(SLICE_HASH)));
	}

	/**
	 * @param table the record's table, for the message
	 * @param recorded the record's {@code slice-hash}, null if it lacks one
	 * @return the function
	 */
	public static SliceHash sliceHash(String table, @Nullable String recorded) {
		if (recorded == null) {
			return RECORDED_BEFORE_SLICE_HASH;
		}
		try {
			return SliceHash.valueOf(recorded);
		}
		catch (IllegalArgumentException ex) {
			throw new JournalSchemaException("The journal's layout record in " + table + " holds slice-hash '" + recorded
					+ "', which this version does not know (expected one of " + java.util.Arrays.toString(SliceHash.values())
					+ "): correct the record, or set journal.cassandra.slice-hash");
		}
	}

}
