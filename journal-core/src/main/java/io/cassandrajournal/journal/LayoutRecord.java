package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverTimeoutException;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.servererrors.WriteTimeoutException;
import com.datastax.oss.driver.internal.core.util.concurrent.CompletableFutures;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalLayoutMismatchException;
import io.cassandrajournal.JournalSchemaException;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.JournalTables;
import io.cassandrajournal.internal.RecordedLayout;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.internal.TableDefinition;
import io.cassandrajournal.internal.TableDefinition.Column;

/**
 * Where the journal's layout settings are recorded on the first start against a keyspace, so that an instance
 * configured differently refuses to start instead of silently missing or misreading the others' rows. A table of
 * our own, {@code <eventsTable>_layout}, one row; the TypeScript implementation neither reads nor writes it.
 * The first start records with a lightweight transaction, so two first starts agree on one record; a setting the
 * record lacks (it was written by a version before the setting existed) is added the same way by the first start
 * that knows it, with the value its absence meant ({@code tag-slice-groups}: 0) where there is one, and checked from
 * then on.
 */
final class LayoutRecord {

	private static final Logger logger = LoggerFactory.getLogger(LayoutRecord.class);

	private static final String KEY = "layout";

	/**
	 * What a record written before a setting existed means for it, where that is not "as configured": a keyspace
	 * recorded before {@code slice-hash} existed put its entities in slices with {@code String.hashCode}, so its
	 * segments' cursors and sliced tag rows follow that function, whatever this instance is configured with.
	 */
	static final Map<String, String> RECORDED_BEFORE = Map.of(RecordedLayout.SLICE_HASH,
			RecordedLayout.RECORDED_BEFORE_SLICE_HASH.name());

	private LayoutRecord() {
	}

	private static TableDefinition table(CassandraJournalOptions options) {
		return new TableDefinition(tableName(options), "CREATE TABLE IF NOT EXISTS " + options.requireKeyspace() + "."
				+ tableName(options) + " (id text PRIMARY KEY, settings map<text, text>, recorded_at timestamp)",
				List.of(new Column("id", "text", "partition_key", 0, "none"), new Column("settings", "map<text, text>", "regular", -1,
						"none")));
	}

	private static String tableName(CassandraJournalOptions options) {
		return RecordedLayout.tableName(options);
	}

	/**
	 * @param options the journal options
	 * @return the settings that decide how rows are laid out, by property name, in a fixed order
	 */
	static Map<String, String> layout(CassandraJournalOptions options) {
		Map<String, String> layout = new LinkedHashMap<>();
		layout.put("use-tag-index", Boolean.toString(options.useTagIndex()));
		// Which table the index lives in matters only while it is written.
		layout.put("tag-index-table", options.useTagIndex() ? options.tagIndexTable() : "");
		layout.put("tag-bucketing", options.useTagIndex() ? options.tagBucketing().name() : TagBucketing.NONE.name());
		// Which partitions of the segment-aware index hold a row depends on the groups (0: no such index).
		layout.put("tag-slice-groups", Integer.toString(options.useTagIndex() ? options.tagSliceGroups() : 0));
		// Which segment (cursor) and which sliced tag partition an entity belongs to; see RECORDED_BEFORE. Unset,
		// the default (murmur3) is what a new record gets, and an existing record's value is adopted (adopted()).
		layout.put(RecordedLayout.SLICE_HASH, options.sliceHash().name());
		layout.put("partition-size", Long.toString(options.partitionSize()));
		layout.put("persistence-id-buckets", Integer.toString(options.persistenceIdBuckets()));
		return layout;
	}

	/**
	 * Records this instance's layout if none is recorded yet, else compares, after adding the settings the record
	 * lacks (a record of an older version): with the value their absence implies where there is one
	 * ({@link #IMPLIED_BY_ABSENCE}), else this instance's. A keyspace with events but no record gets the implied
	 * values too, and is refused when {@code slice-hash} is unset (its events do not show the function); one without
	 * its events table while tables may not be created is refused before anything is recorded.
	 * @param session the session
	 * @param options the journal options
	 * @throws JournalLayoutMismatchException if a recorded setting differs
	 * @return the record's settings after the check (a setting this instance leaves unset, {@link #adopted}, is not
	 * compared: its recorded value is adopted)
	 * @throws JournalSchemaException if the table is missing and may not be created, or the
	 * record still lacks settings after one round of additions per setting
	 */
	static Map<String, String> check(CqlSession session, CassandraJournalOptions options) {
		String keyspace = options.requireKeyspace();
		SchemaManager.ensure(session, options, List.of(table(options)));
		String table = keyspace + "." + tableName(options);
		Map<String, String> configured = layout(options);
		Set<String> adopted = adopted(options);
		JournalStatements.Statements statements = new JournalStatements.Statements(session, options);
		Row recorded = session.execute(statements.serialRead("SELECT settings FROM " + table + " WHERE id = ?").bind(KEY))
			.one();
		if (recorded == null) {
			// Asked of the node, not of the driver's schema metadata, which may be off or filtered: a missed events
			// table would record this instance's values over events written with others (finding 27, engineer L).
			boolean eventsTable = RecordedLayout.tableExists(session, keyspace, options.eventsTable());
			if (!eventsTable && !options.autoCreateTables()) {
				// The journal's factory would refuse this start; refused here, before a "new keyspace" record of this
				// instance's values is left behind for an events table restored later (engineer L2, finding 27).
				throw SchemaManager.missingTable(keyspace, JournalTables.events(options));
			}
			boolean hadEvents = eventsTable && RecordedLayout.hasEvents(session, statements, options);
			if (hadEvents) {
				checkPartitionSize(session, statements, keyspace, options);
				requireSliceHash(table, options);
			}
			// Events written without a record come from a version before the record, or from the TypeScript
			// implementation: neither wrote what the settings with an implied value add (review of S1).
			Map<String, String> toRecord = hadEvents ? implied(configured, configured.keySet()) : configured;
			Row result = session.execute(statements.conditional("INSERT INTO " + table
					+ " (id, settings, recorded_at) VALUES (?, ?, toTimestamp(now())) IF NOT EXISTS")
				.bind(KEY, toRecord)).one();
			if (result != null && result.getBoolean("[applied]")) {
				if (hadEvents) {
					logger.warn("The journal in keyspace {} has events but no layout record (written by an older version "
							+ "or another implementation): recorded the layout {} in {}; if the events were "
							+ "written with other settings, stop, correct the properties and the record, and start again",
							keyspace, toRecord, table);
				}
				else {
					logger.info("Recorded the journal's layout {} in {}", toRecord, table);
				}
				// An instance configured otherwise than what was recorded (tag-slice-groups) is refused below.
				compare(table, toRecord, configured, adopted);
				return toRecord;
			}
			recorded = result;
		}
		Map<String, String> settings = recorded.getMap("settings", String.class, String.class);
		// Each round adds every missing setting, or reads back another start's addition of at least one of them.
		for (int additions = 0; additions <= configured.size(); additions++) {
			// A value the record holds decides first: a start that differs in one adds nothing.
			compare(table, settings, configured, adopted);
			Set<String> missing = new LinkedHashSet<>(configured.keySet());
			missing.removeAll(settings.keySet());
			if (missing.isEmpty()) {
				if (!adopted.isEmpty()) {
					logger.debug("Adopted {} of the journal's layout record in {} (unset here)", adopted, table);
				}
				return settings;
			}
			if (additions < configured.size()) {
				settings = addMissing(session, statements, table, meantByOldRecord(configured, missing));
			}
		}
		Set<String> missing = new LinkedHashSet<>(configured.keySet());
		missing.removeAll(settings.keySet());
		throw new JournalSchemaException("The journal's layout record in " + table + " still lacks "
				+ missing + " after " + configured.size() + " additions (is something removing them?); nothing was "
				+ "started: check the record and start again");
	}

	/**
	 * @return the settings of {@code keys}, each with the value its absence implies if it has one
	 * ({@link #IMPLIED_BY_ABSENCE}), else this instance's
	 */
	private static Map<String, String> implied(Map<String, String> configured, Set<String> keys) {
		Map<String, String> values = new LinkedHashMap<>();
		for (String key : keys) {
			values.put(key, IMPLIED_BY_ABSENCE.getOrDefault(key, configured.get(key)));
		}
		return values;
	}

	/**
	 * @return the settings of {@code keys} a record of an older version lacks, each with the value its absence meant
	 * there ({@link #IMPLIED_BY_ABSENCE}, then {@link #RECORDED_BEFORE}), else this instance's
	 */
	private static Map<String, String> meantByOldRecord(Map<String, String> configured, Set<String> keys) {
		Map<String, String> values = new LinkedHashMap<>();
		for (String key : keys) {
			values.put(key, IMPLIED_BY_ABSENCE.getOrDefault(key, RECORDED_BEFORE.getOrDefault(key, configured.get(key))));
		}
		return values;
	}

	/**
	 * What a record written before a setting existed meant by its absence: the value every instance of that time
	 * behaved as if configured with. It is what gets added, whatever this instance has, and then compared: an
	 * instance with another value is refused, as for any recorded setting (review of S1: the first start of a rolling
	 * upgrade used to record its own value while the instances still on the older version went on without it).
	 */
	private static final Map<String, String> IMPLIED_BY_ABSENCE = Map.of("tag-slice-groups", "0");

	/**
	 * Adds the settings the record lacks (written by an older version, or edited by hand), in one lightweight
	 * transaction conditional on each being absent, so that of two starts adding different values exactly one wins;
	 * then reads the record again (review S1 of the segment-aware tag index: before, a missing setting was taken as
	 * configured by every start and never recorded, so instances with different {@code tag-slice-groups} ran side by
	 * side). A timeout leaves the outcome unknown (the proposal may still complete): the serial read that follows
	 * completes or discards it, and the caller compares what it finds.
	 * @param missing the settings to add, with the values to add
	 * @return the record's settings after the addition, whoever made it
	 */
	private static Map<String, String> addMissing(CqlSession session, JournalStatements.Statements statements,
			String table, Map<String, String> missing) {
		StringBuilder cql = new StringBuilder("UPDATE " + table + " SET settings = settings + ? WHERE id = ? IF ");
		List<Object> values = new ArrayList<>(List.of(missing, KEY));
		for (String setting : missing.keySet()) {
			cql.append((values.size() > 2) ? " AND " : "").append("settings[?] = null");
			values.add(setting);
		}
		boolean applied;
		try {
			// Asynchronous and waited for, as every journal write is sent (a test session injects faults there).
			applied = CompletableFutures
				.getUninterruptibly(session.executeAsync(statements.conditional(cql.toString()).bind(values.toArray())))
				.wasApplied();
		}
		catch (WriteTimeoutException | DriverTimeoutException ex) {
			logger.info("Adding {} to the journal's layout record in {} timed out ({}); reading the record back",
					missing, table, ex.getMessage());
			applied = false;
		}
		Row reread = session.execute(statements.serialRead("SELECT settings FROM " + table + " WHERE id = ?").bind(KEY))
			.one();
		Map<String, String> settings = (reread != null) ? reread.getMap("settings", String.class, String.class)
				: Map.of();
		if (applied) {
			Map<String, String> unexpected = new LinkedHashMap<>(missing);
			unexpected.entrySet()
				.removeIf((e) -> e.getValue().equals(IMPLIED_BY_ABSENCE.getOrDefault(e.getKey(), RECORDED_BEFORE.get(e.getKey()))));
			if (unexpected.isEmpty()) {
				logger.info("Added {} to the journal's layout record in {} (it predates them)", missing, table);
			}
			else {
				logger.warn("The journal's layout record in {} lacked {} (edited by hand?): recorded this instance's {}; "
						+ "every instance must now be started with these values", table, unexpected.keySet(), missing);
			}
		}
		return settings;
	}

	/**
	 * Before recording the layout of a keyspace that already has events, checks the one setting its rows reveal:
	 * each event's {@code partition_nr} must be {@code (sequence_nr - 1) / partition-size}. A wrong
	 * {@code partition-size} recorded here would make every replay read the wrong partitions (events would seem
	 * lost) and refuse the correctly configured instances from then on.
	 */
	private static void checkPartitionSize(CqlSession session, JournalStatements.Statements statements, String keyspace,
			CassandraJournalOptions options) {
		long size = options.partitionSize();
		for (Row row : session.execute(statements.read("SELECT persistence_id, partition_nr, sequence_nr FROM " + keyspace
				+ "." + options.eventsTable() + " LIMIT " + PARTITION_SIZE_SAMPLE).bind())) {
			long partition = row.getLong("partition_nr");
			long sequenceNr = row.getLong("sequence_nr");
			if (partition != (sequenceNr - 1) / size) {
				long above = (sequenceNr - 1) / (partition + 1);
				String range = (partition == 0) ? "greater than " + above
						: "greater than " + above + " and at most " + ((sequenceNr - 1) / partition);
				throw new JournalSchemaException("The events in " + keyspace + "."
						+ options.eventsTable() + " were written with another partition size: '"
						+ row.getString("persistence_id") + "' has sequence_nr " + sequenceNr + " in partition_nr "
						+ partition + ", which journal.cassandra.partition-size=" + size + " would put in partition "
						+ ((sequenceNr - 1) / size) + ". Set journal.cassandra.partition-size to the value they were "
						+ "written with (" + range + "); no layout was recorded.");
			}
		}
	}

	private static final int PARTITION_SIZE_SAMPLE = 100;

	/**
	 * Before recording the layout of a keyspace that already has events, requires {@code slice-hash} to be set: the
	 * events do not show which function put their entities in slices, and the segments' cursors and sliced tag rows
	 * written before follow it. Unset, this instance's default ({@code murmur3}) used to be recorded, silently
	 * switching a {@code string-hash} keyspace whose record was deleted (engineer L2, review of finding 27). Whether
	 * the keyspace holds such data at all is not cheap to know (the cursors live in the projections' durable state
	 * table, which these options do not name), so the start is refused whatever it holds.
	 */
	private static void requireSliceHash(String table, CassandraJournalOptions options) {
		if (options.configuredSliceHash().isEmpty()) {
			throw RecordedLayout.missingRecord(table, options);
		}
	}

	/**
	 * @return the settings this instance leaves unset, to take from the record: {@code slice-hash} when
	 * {@link CassandraJournalOptions#configuredSliceHash()} is empty (an upgraded instance keeps the keyspace's
	 * function without being told; an explicit one that differs is refused)
	 */
	static Set<String> adopted(CassandraJournalOptions options) {
		return options.configuredSliceHash().isPresent() ? Set.of() : Set.of(RecordedLayout.SLICE_HASH);
	}

	private static void compare(String table, Map<String, String> recorded, Map<String, String> configured,
			Set<String> adopted) {
		List<JournalLayoutMismatchException.Mismatch> mismatches = new ArrayList<>();
		configured.forEach((setting, value) -> {
			if (adopted.contains(setting)) {
				return;
			}
			// A setting the record lacks is taken as RECORDED_BEFORE says an older record meant it, else as
			// configured; check() then adds it to the record (only once this comparison passed).
			String was = recorded.getOrDefault(setting, RECORDED_BEFORE.get(setting));
			if (was != null && !was.equals(value)) {
				mismatches.add(new JournalLayoutMismatchException.Mismatch(setting, was, value));
			}
		});
		if (!mismatches.isEmpty()) {
			throw new JournalLayoutMismatchException(table, mismatches);
		}
	}

}
