package io.cassandrajournal.internal;

import java.util.Arrays;
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
		if (!tableExists(session, keyspace, table)) {
			return options;
		}
		JournalStatements.Statements statements = new JournalStatements.Statements(session, options);
		// A serial read, as the record's check reads it: a record just written by another instance is seen.
		Row row = session
			.execute(statements.serialRead("SELECT settings FROM " + keyspace + "." + table + " WHERE id = ?").bind(KEY))
			.one();
		if (row == null) {
			// The record table exists but holds no record (deleted): with events, murmur3 would be a guess, and a
			// wrong one for a string-hash keyspace (finding 30, item 4). Refused as verifyLayout refuses.
			if (tableExists(session, keyspace, options.eventsTable()) && hasEvents(session, statements, options)) {
				throw missingRecord(keyspace + "." + table, options);
			}
			return options;
		}
		Map<String, String> settings = row.getMap("settings", String.class, String.class);
		return options.withSliceHash(sliceHash(keyspace + "." + table, settings.get(SLICE_HASH)));
	}

	/**
	 * Asked of the node, not of the driver's schema metadata, which may be off, filtered or stale.
	 * @return whether the table exists
	 */
	public static boolean tableExists(CqlSession session, String keyspace, String table) {
		return session.execute(SimpleStatement
			.newInstance("SELECT table_name FROM system_schema.tables WHERE keyspace_name = ? AND table_name = ?",
					keyspace, table)
			.setIdempotent(true)).one() != null;
	}

	/**
	 * Whether the events table, which must exist ({@link #tableExists}), holds a row: one single-row read.
	 * @return whether the journal has events
	 */
	public static boolean hasEvents(CqlSession session, JournalStatements.Statements statements,
			CassandraJournalOptions options) {
		return session.execute(statements
			.read("SELECT persistence_id FROM " + options.requireKeyspace() + "." + options.eventsTable() + " LIMIT 1")
			.bind()).one() != null;
	}

	/**
	 * @param table the layout record's table
	 * @param options the instance's options (slice-hash unset)
	 * @return the refusal of a start over events whose layout record is missing while {@code slice-hash} is unset
	 */
	public static JournalSchemaException missingRecord(String table, CassandraJournalOptions options) {
		return new JournalSchemaException("The journal in " + options.requireKeyspace() + "."
				+ options.eventsTable() + " has events but no layout record in " + table + " (deleted, or the "
				+ "events were written by a version before the record or by another implementation), and "
				+ "journal.cassandra.slice-hash is unset: set journal.cassandra.slice-hash "
				+ "(CassandraJournalOptions.withSliceHash) to the function the events were written with; the layout "
				+ "record is missing, and which function put the entities in slices (the segments' cursors, the "
				+ "sliced tag rows) cannot be read from the events: string-hash for a keyspace first started before "
				+ "2026-12-02 or a record that held STRING_HASH, murmur3 for a record that held MURMUR3 or a keyspace "
				+ "only the TypeScript implementation wrote. Nothing was recorded; every instance may leave it unset "
				+ "again once one start has recorded it.");
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
					+ "', which this version does not know (expected one of " + Arrays.toString(SliceHash.values())
					+ "): correct the record, or set journal.cassandra.slice-hash");
		}
	}

}
