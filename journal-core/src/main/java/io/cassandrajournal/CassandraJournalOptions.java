package io.cassandrajournal;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;

import javax.net.ssl.SSLContext;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.internal.CqlNames;
import io.cassandrajournal.internal.TagSlices;

/**
 * Immutable options of the journal and its stores. Start from {@link #create()} and chain withers; every
 * wither checks its value at once and names the option in its message.
 *
 * <pre>{@code
 * CassandraJournalOptions options = CassandraJournalOptions.create()
 *     .withContactPoints(List.of("cassandra-1:9042", "cassandra-2:9042"))
 *     .withLocalDatacenter("dc1")
 *     .withKeyspace("my_app_events")
 *     .withSerialConsistency(DefaultConsistencyLevel.LOCAL_SERIAL);
 * }</pre>
 *
 * Defaults follow the reference implementation: tables {@code events}, {@code metadata},
 * {@code all_persistence_ids}, {@code events_by_tag}; partition size 500,000; tables created automatically;
 * tag index off; consistency {@code LOCAL_QUORUM}; lightweight transactions on; serial consistency left to
 * the driver ({@code SERIAL}).
 */
public final class CassandraJournalOptions {

	private final List<String> contactPoints;

	private final @Nullable String keyspace;

	private final String eventsTable;

	private final String metadataTable;

	private final String allIdsTable;

	private final String tagIndexTable;

	private final String snapshotsTable;

	private final String durableStateTable;

	private final long partitionSize;

	private final boolean autoCreateTables;

	private final boolean useTagIndex;

	private final TagBucketing tagBucketing;

	private final int tagSliceGroups;

	/** Null: unset, adopted from the keyspace's layout record. */
	private final @Nullable SliceHash sliceHash;

	private final ConsistencyLevel consistency;

	private final boolean lightweightTransactions;

	private final @Nullable ConsistencyLevel serialConsistency;

	private final int persistenceIdBuckets;

	private final int pageSize;

	private final @Nullable String localDatacenter;

	private final @Nullable String username;

	private final @Nullable String password;

	private final @Nullable SSLContext sslContext;

	private final boolean sslHostnameValidation;

	private final Duration requestTimeout;

	private final Duration startupWait;

	/** The shortest in-flight wait above zero ({@link #withInFlightWait}). */
	private static final Duration MIN_IN_FLIGHT_WAIT = Duration.ofMillis(100);

	private final Duration inFlightWait;

	private final Duration claimSettleTime;

	private final Duration tagIndexTtl;

	private final Clock clock;

	private CassandraJournalOptions(Values v) {
		this.contactPoints = List.copyOf(v.contactPoints);
		this.keyspace = v.keyspace;
		this.eventsTable = v.eventsTable;
		this.metadataTable = v.metadataTable;
		this.allIdsTable = v.allIdsTable;
		this.tagIndexTable = v.tagIndexTable;
		this.snapshotsTable = v.snapshotsTable;
		this.durableStateTable = v.durableStateTable;
		this.partitionSize = v.partitionSize;
		this.autoCreateTables = v.autoCreateTables;
		this.useTagIndex = v.useTagIndex;
		this.tagBucketing = v.tagBucketing;
		this.tagSliceGroups = v.tagSliceGroups;
		this.sliceHash = v.sliceHash;
		this.consistency = v.consistency;
		this.lightweightTransactions = v.lightweightTransactions;
		this.serialConsistency = v.serialConsistency;
		this.persistenceIdBuckets = v.persistenceIdBuckets;
		this.pageSize = v.pageSize;
		this.localDatacenter = v.localDatacenter;
		this.username = v.username;
		this.password = v.password;
		this.sslContext = v.sslContext;
		this.sslHostnameValidation = v.sslHostnameValidation;
		this.requestTimeout = v.requestTimeout;
		this.startupWait = v.startupWait;
		this.inFlightWait = v.inFlightWait;
		this.claimSettleTime = v.claimSettleTime;
		this.tagIndexTtl = v.tagIndexTtl;
		this.clock = v.clock;
	}

	/** @return options with every default set and no keyspace yet */
	public static CassandraJournalOptions create() {
		return new CassandraJournalOptions(new Values());
	}

	private CassandraJournalOptions with(Consumer<Values> change) {
		Values values = new Values(this);
		change.accept(values);
		return new CassandraJournalOptions(values);
	}

	/**
	 * @param contactPoints initial nodes as {@code host:port} (port defaults to 9042); the driver discovers
	 * the rest. Only used when the journal opens its own session
	 * @return new options
	 */
	public CassandraJournalOptions withContactPoints(List<String> contactPoints) {
		Objects.requireNonNull(contactPoints, "contactPoints");
		for (String point : contactPoints) {
			if (point == null || point.isBlank()) {
				throw new IllegalArgumentException("contactPoints must not contain blank entries: " + contactPoints);
			}
		}
		return with((v) -> v.contactPoints = List.copyOf(contactPoints));
	}

	/**
	 * @param keyspace an existing keyspace; the journal creates tables, never the keyspace
	 * @return new options
	 */
	public CassandraJournalOptions withKeyspace(String keyspace) {
		return with((v) -> v.keyspace = CqlNames.check("keyspace", keyspace));
	}

	/**
	 * @param eventsTable the events table, default {@code events}
	 * @return new options
	 */
	public CassandraJournalOptions withEventsTable(String eventsTable) {
		return with((v) -> v.eventsTable = CqlNames.check("eventsTable", eventsTable));
	}

	/**
	 * @param metadataTable the table holding each persistenceId's head (highest claimed sequence number),
	 * default {@code metadata}
	 * @return new options
	 */
	public CassandraJournalOptions withMetadataTable(String metadataTable) {
		return with((v) -> v.metadataTable = CqlNames.check("metadataTable", metadataTable));
	}

	/**
	 * @param allIdsTable the table behind the persistenceId queries, default {@code all_persistence_ids}
	 * @return new options
	 */
	public CassandraJournalOptions withAllIdsTable(String allIdsTable) {
		return with((v) -> v.allIdsTable = CqlNames.check("allIdsTable", allIdsTable));
	}

	/**
	 * @param tagIndexTable the tag index side table, default {@code events_by_tag}; written only with
	 * {@link #withUseTagIndex(boolean) useTagIndex}
	 * @return new options
	 */
	public CassandraJournalOptions withTagIndexTable(String tagIndexTable) {
		String name = CqlNames.check("tagIndexTable", tagIndexTable);
		checkBucketTableNames(name, this.tagBucketing);
		checkSlicedTableName(name, this.tagBucketing, this.tagSliceGroups);
		return with((v) -> v.tagIndexTable = name);
	}

	/**
	 * @param tagBucketing how the tag index is partitioned, default {@link TagBucketing#NONE} (the reference
	 * layout, one partition per tag). With buckets the index is written to and read from
	 * {@code <tagIndexTable>_<unit>} and {@code <tagIndexTable>_<unit>_buckets} instead (see
	 * {@link TagBucketing}); the reference implementation does not read those tables. With
	 * {@link #withTagSliceGroups tag slice groups} too, the sliced copies are bucketed the same way
	 * ({@link #tagIndexSlicedTable()})
	 * @return new options
	 */
	public CassandraJournalOptions withTagBucketing(TagBucketing tagBucketing) {
		Objects.requireNonNull(tagBucketing, "tagBucketing");
		checkBucketTableNames(this.tagIndexTable, tagBucketing);
		checkSlicedTableName(this.tagIndexTable, tagBucketing, this.tagSliceGroups);
		return with((v) -> v.tagBucketing = tagBucketing);
	}

	/**
	 * @param tagSliceGroups the segment-aware tag index, default 0 (off); else a power of two from 2 to 1024, the
	 * number of slice groups. With it on, every tag row is written a second time, to
	 * {@code <tagIndexTable>_sliced<groups>}, in the partition {@code (tag, slice_group)} of its persistenceId's
	 * slice group ({@code slice * groups / 1024}, the slice the projection segments use). A segment of a
	 * projection shared by several instances then reads only its own groups' partitions instead of the whole
	 * tag; readers of the whole tag (tag queries, unsegmented projections, the TypeScript implementation) keep
	 * reading the reference index. 16 suits projections of up to 16 segments (one partition per segment). With
	 * {@link #withTagBucketing tag bucketing} the copies go to {@code <tagIndexTable>_<unit>_sliced<groups>}, partition
	 * {@code (tag, bucket, slice_group)}, and a segment walks the tag's bucket list reading its groups' partitions
	 * of each bucket
	 * @return new options
	 */
	public CassandraJournalOptions withTagSliceGroups(int tagSliceGroups) {
		if (!TagSlices.validGroups(tagSliceGroups)) {
			throw new IllegalArgumentException(
					"tagSliceGroups must be 0 (off) or a power of two from 2 to 1024, was " + tagSliceGroups);
		}
		checkSlicedTableName(this.tagIndexTable, this.tagBucketing, tagSliceGroups);
		return with((v) -> v.tagSliceGroups = tagSliceGroups);
	}

	/**
	 * @param sliceHash the function that puts a persistenceId in one of the 1024 slices projection segments and
	 * the segment-aware tag index split entities by. Part of the recorded layout. Unset by default: the journal
	 * then adopts the keyspace's recorded function ({@link SliceHash#STRING_HASH} for a keyspace whose layout was
	 * recorded before this option existed), and a new keyspace gets {@link SliceHash#MURMUR3}. Set, it must match
	 * the keyspace's record: another function is refused at {@code verifyLayout} (changing it would move entities
	 * between segments, whose cursors and sliced tag rows are per slice range)
	 * @return new options
	 */
	public CassandraJournalOptions withSliceHash(SliceHash sliceHash) {
		Objects.requireNonNull(sliceHash, "sliceHash");
		return with((v) -> v.sliceHash = sliceHash);
	}

	private static void checkSlicedTableName(String tagIndexTable, TagBucketing bucketing, int groups) {
		String table = slicedTable(tagIndexTable, bucketing, groups);
		if (groups != 0 && table.length() > 48) {
			throw new IllegalArgumentException("tagIndexTable '" + tagIndexTable + "' is too long for tagSliceGroups "
					+ groups + ((bucketing == TagBucketing.NONE) ? "" : " with tag bucketing " + bucketing)
					+ ": the table '" + table + "' would exceed 48 characters");
		}
	}

	private static String slicedTable(String tagIndexTable, TagBucketing bucketing, int groups) {
		String data = (bucketing == TagBucketing.NONE) ? tagIndexTable : tagIndexTable + "_" + bucketing.tableSuffix();
		return data + "_sliced" + groups;
	}

	private static void checkBucketTableNames(String tagIndexTable, TagBucketing bucketing) {
		if (bucketing != TagBucketing.NONE) {
			String longest = tagIndexTable + "_" + bucketing.tableSuffix() + "_buckets";
			if (longest.length() > 48) {
				throw new IllegalArgumentException("tagIndexTable '" + tagIndexTable + "' is too long for tag bucketing "
						+ bucketing + ": the bucket list table '" + longest + "' would exceed 48 characters; "
						+ "choose a tag index table name of at most " + (48 - longest.length() + tagIndexTable.length())
						+ " characters");
			}
		}
	}

	/**
	 * @param snapshotsTable the snapshot table, default {@code snapshots}
	 * @return new options
	 */
	public CassandraJournalOptions withSnapshotsTable(String snapshotsTable) {
		return with((v) -> v.snapshotsTable = CqlNames.check("snapshotsTable", snapshotsTable));
	}

	/**
	 * @param durableStateTable the durable state table (projection offsets live there), default
	 * {@code durable_state}
	 * @return new options
	 */
	public CassandraJournalOptions withDurableStateTable(String durableStateTable) {
		return with((v) -> v.durableStateTable = CqlNames.check("durableStateTable", durableStateTable));
	}

	/**
	 * @param partitionSize rows per events partition before a persistenceId rolls over to the next
	 * {@code partition_nr}, default 500,000. Must match every writer sharing the keyspace
	 * @return new options
	 */
	public CassandraJournalOptions withPartitionSize(long partitionSize) {
		if (partitionSize < 1) {
			throw new IllegalArgumentException("partitionSize must be at least 1, was " + partitionSize);
		}
		return with((v) -> v.partitionSize = partitionSize);
	}

	/**
	 * @param autoCreateTables whether missing tables are created on start-up (default true); when false,
	 * start-up checks them and fails naming what is missing
	 * @return new options
	 */
	public CassandraJournalOptions withAutoCreateTables(boolean autoCreateTables) {
		return with((v) -> v.autoCreateTables = autoCreateTables);
	}

	/**
	 * @param useTagIndex whether appends also write the {@code events_by_tag} index (default false)
	 * @return new options
	 */
	public CassandraJournalOptions withUseTagIndex(boolean useTagIndex) {
		return with((v) -> v.useTagIndex = useTagIndex);
	}

	/**
	 * @param consistency the consistency of every read and write, default {@code LOCAL_QUORUM}
	 * @return new options
	 */
	public CassandraJournalOptions withConsistency(ConsistencyLevel consistency) {
		Objects.requireNonNull(consistency, "consistency");
		if (consistency.isSerial()) {
			throw new IllegalArgumentException("consistency must not be a serial level (" + consistency
					+ "); set it with withSerialConsistency instead");
		}
		return with((v) -> v.consistency = consistency);
	}

	/**
	 * @param lightweightTransactions whether appends claim their sequence range with a Paxos round (default
	 * true). Turning it off is unsafe with more than one writer per persistenceId: a losing concurrent
	 * append silently overwrites the winner's events. Set it the same across the fleet
	 * @return new options
	 */
	public CassandraJournalOptions withLightweightTransactions(boolean lightweightTransactions) {
		return with((v) -> v.lightweightTransactions = lightweightTransactions);
	}

	/**
	 * @param serialConsistency the Paxos consistency of the append claim and durable-state updates;
	 * {@code null} leaves the driver's {@code SERIAL}. Use {@code LOCAL_SERIAL} on a multi-DC keyspace
	 * @return new options
	 */
	public CassandraJournalOptions withSerialConsistency(@Nullable ConsistencyLevel serialConsistency) {
		if (serialConsistency != null && !serialConsistency.isSerial()) {
			throw new IllegalArgumentException("serialConsistency must be SERIAL or LOCAL_SERIAL, was "
					+ serialConsistency);
		}
		return with((v) -> v.serialConsistency = serialConsistency);
	}

	/**
	 * @param persistenceIdBuckets how many partitions of {@code all_persistence_ids} new ids are spread over
	 * (by hash), default 1. With 1 every id goes under {@code tag = '_all'}, exactly as the reference
	 * implementation writes it; with n &gt; 1 ids go under {@code '_all/0'} .. {@code '_all/<n-1>'}.
	 * Reads always include {@code '_all'} as well. Only ever increase it: ids written under a bucket that
	 * is no longer read are not listed
	 * @return new options
	 */
	public CassandraJournalOptions withPersistenceIdBuckets(int persistenceIdBuckets) {
		if (persistenceIdBuckets < 1 || persistenceIdBuckets > 1024) {
			throw new IllegalArgumentException("persistenceIdBuckets must be between 1 and 1024, was "
					+ persistenceIdBuckets);
		}
		return with((v) -> v.persistenceIdBuckets = persistenceIdBuckets);
	}

	/**
	 * @param pageSize rows fetched per page by replays and queries, default 1,000; memory use of a replay is
	 * bounded by it, whatever the number of events
	 * @return new options
	 */
	public CassandraJournalOptions withPageSize(int pageSize) {
		if (pageSize < 1) {
			throw new IllegalArgumentException("pageSize must be at least 1, was " + pageSize);
		}
		return with((v) -> v.pageSize = pageSize);
	}

	/**
	 * @param localDatacenter the data center the driver treats as local (required by the driver when
	 * contact points are given)
	 * @return new options
	 */
	public CassandraJournalOptions withLocalDatacenter(@Nullable String localDatacenter) {
		return with((v) -> v.localDatacenter = localDatacenter);
	}

	/**
	 * @param username user for {@code PasswordAuthenticator}
	 * @param password its password
	 * @return new options
	 */
	public CassandraJournalOptions withCredentials(String username, String password) {
		Objects.requireNonNull(username, "username");
		Objects.requireNonNull(password, "password");
		return with((v) -> {
			v.username = username;
			v.password = password;
		});
	}

	/**
	 * @param sslContext the TLS context for client connections, or {@code null} for plain connections
	 * @return new options
	 */
	public CassandraJournalOptions withSslContext(@Nullable SSLContext sslContext) {
		return with((v) -> v.sslContext = sslContext);
	}

	/**
	 * @param validate whether the journal's own session checks that each node's certificate was issued for the
	 * address it connects to (default {@code true}). Without it any certificate signed by a trusted authority is
	 * accepted, so whoever holds one can sit between the application and Cassandra. Turn it off only for nodes
	 * whose certificates do not name them, and say so in your threat model.
	 * @return new options
	 */
	public CassandraJournalOptions withSslHostnameValidation(boolean validate) {
		return with((v) -> v.sslHostnameValidation = validate);
	}

	/**
	 * @param requestTimeout how long one request may take before it fails, default 10 s (Paxos rounds on a
	 * loaded cluster are slow)
	 * @return new options
	 */
	public CassandraJournalOptions withRequestTimeout(Duration requestTimeout) {
		Objects.requireNonNull(requestTimeout, "requestTimeout");
		if (requestTimeout.isNegative() || requestTimeout.isZero()) {
			throw new IllegalArgumentException("requestTimeout must be positive, was " + requestTimeout);
		}
		return with((v) -> v.requestTimeout = requestTimeout);
	}

	/**
	 * @param startupWait how long {@link JournalSessions#open} keeps trying while no contact point answers
	 * (default 30 s; zero fails at the first attempt), so that an application started a little before its
	 * Cassandra does not fail. Authentication errors fail at once
	 * @return new options
	 */
	public CassandraJournalOptions withStartupWait(Duration startupWait) {
		Objects.requireNonNull(startupWait, "startupWait");
		if (startupWait.isNegative()) {
			throw new IllegalArgumentException("startupWait must not be negative, was " + startupWait);
		}
		return with((v) -> v.startupWait = startupWait);
	}

	/**
	 * @param inFlightWait how long after its claim a sequence number without a visible event is still treated
	 * as in flight (another writer's append between its claim and its batch) and waited for by entity loads,
	 * entity projections and {@code deleteTo} (with the tag index on; without it, only a hole at the end of a range
	 * whose last number shows no event and, with client-side time stamps, no event above it in its partition either;
	 * with server-side time stamps, every hole of a range whose last number shows no event), default 30 s; once its claim is older, a missing number is a crash gap: sealed
	 * by entity loads and entity projections (a range deletion, so its batch never appears later), stepped over
	 * and logged. An append whose rows complete later than this after its claim reports
	 * {@link io.cassandrajournal.journal.JournalWriteUncertainException}. Zero never waits and never seals (the
	 * behaviour of plain replays); other values under 100 ms are refused (the writer's deadline, this less a margin,
	 * would leave appends no time). A claim whose writes fail is released only while its release cannot apply past
	 * the writer's deadline: sent with a request timeout of what is left of the wait after {@link #claimSettleTime()}
	 * and a margin, at most {@link #requestTimeout()}, and not sent with less than 500 ms (the append then fails with
	 * {@link io.cassandrajournal.journal.JournalWriteUncertainException}, its numbers a gap); keep this well above the
	 * settle time. Assumes writers' clocks agree to well within this bound
	 * @return new options
	 */
	public CassandraJournalOptions withInFlightWait(Duration inFlightWait) {
		Objects.requireNonNull(inFlightWait, "inFlightWait");
		if (inFlightWait.isNegative()) {
			throw new IllegalArgumentException("inFlightWait must not be negative, was " + inFlightWait);
		}
		if (!inFlightWait.isZero() && inFlightWait.compareTo(MIN_IN_FLIGHT_WAIT) < 0) {
			// The writer's deadline is the wait less a margin of at least 5 ms: a shorter wait makes every append late.
			throw new IllegalArgumentException("inFlightWait must be zero (no waits, no seals) or at least 100ms, was "
					+ inFlightWait);
		}
		return with((v) -> v.inFlightWait = inFlightWait);
	}

	/**
	 * @param claimSettleTime how long after a claim (a lightweight transaction on the head) was sent its
	 * coordinator may still apply it, default 6 s: Cassandra 5.0's built-in Paxos v1 reads the row before proposing,
	 * and that read may end {@code read_request_timeout} (5 s) after the request started, plus 1 s of margin; Paxos
	 * v2 with the built-in timeouts ({@code cas_contention_timeout} 1.8 s, {@code write_request_timeout} 2 s) stops
	 * at 2 s, so 3 s covers it (docs/reliability.md, finding 20). A claim that failed without an answer from its
	 * coordinator (a lost connection, a client-side timeout) is resolved by a serial read of the head only once this
	 * has passed since it was sent (from the failure, when the driver sent it more than once), so a round still
	 * running cannot apply after the read; a server-side timeout is resolved at once. A failed append's claim release
	 * is sent with a request timeout (which covers the driver's re-sends) of what is left before the writer's deadline
	 * less this and a margin, at most the request timeout, so that its last attempt cannot apply after the deadline;
	 * with less than 500 ms left it is not sent ({@link #withInFlightWait}). Raise it with the cluster's timeouts; zero reads at once (a claim still running may then
	 * apply after its append was reported as not applied, leaving a gap); otherwise between 1 s and 1 min
	 * @return new options
	 */
	public CassandraJournalOptions withClaimSettleTime(Duration claimSettleTime) {
		Objects.requireNonNull(claimSettleTime, "claimSettleTime");
		if (claimSettleTime.isNegative()) {
			throw new IllegalArgumentException("claimSettleTime must not be negative, was " + claimSettleTime);
		}
		if (!claimSettleTime.isZero() && (claimSettleTime.compareTo(MIN_CLAIM_SETTLE_TIME) < 0
				|| claimSettleTime.compareTo(MAX_CLAIM_SETTLE_TIME) > 0)) {
			throw new IllegalArgumentException("claimSettleTime must be 0 or between " + MIN_CLAIM_SETTLE_TIME + " and "
					+ MAX_CLAIM_SETTLE_TIME + " (no coordinator runs a Paxos round for less than 1 s or more than a minute "
					+ "with sane timeouts), was " + claimSettleTime);
		}
		return with((v) -> v.claimSettleTime = claimSettleTime);
	}

	/** The shortest non-zero {@link #withClaimSettleTime}: below any Paxos round's bound. */
	private static final Duration MIN_CLAIM_SETTLE_TIME = Duration.ofSeconds(1);

	/** The longest {@link #withClaimSettleTime}: far above any sane timeouts, and far from overflowing nanoseconds. */
	private static final Duration MAX_CLAIM_SETTLE_TIME = Duration.ofMinutes(1);

	/** Cassandra's largest TTL: 20 years. */
	private static final Duration MAX_TTL = Duration.ofSeconds(630_720_000);

	/**
	 * @param tagIndexTtl how long a tag index row lives after it is written (Cassandra's per-row TTL), default
	 * zero: for ever. The rows of the bucketed index's bucket list live this long plus one bucket. Tag queries and
	 * tag projections then see only the events of that period; the events stay in the journal (replay, entity
	 * loads). An expired row becomes a tombstone for {@code gc_grace_seconds}, like a deleted one, but costs no
	 * delete request. Whole seconds, at most 20 years. Rows written by a backfill get the full TTL from their
	 * write; rows written before the option was set keep none
	 * @return new options
	 */
	public CassandraJournalOptions withTagIndexTtl(Duration tagIndexTtl) {
		Objects.requireNonNull(tagIndexTtl, "tagIndexTtl");
		if (tagIndexTtl.isNegative() || tagIndexTtl.compareTo(MAX_TTL) > 0 || tagIndexTtl.getNano() != 0) {
			throw new IllegalArgumentException(
					"tagIndexTtl must be whole seconds from 0 (no TTL) to 20 years, was " + tagIndexTtl);
		}
		return with((v) -> v.tagIndexTtl = tagIndexTtl);
	}

	/**
	 * @param clock the clock that stamps events and state updates, default UTC system clock
	 * @return new options
	 */
	public CassandraJournalOptions withClock(Clock clock) {
		Objects.requireNonNull(clock, "clock");
		return with((v) -> v.clock = clock);
	}

	public List<String> contactPoints() {
		return this.contactPoints;
	}

	public Optional<String> keyspace() {
		return Optional.ofNullable(this.keyspace);
	}

	/**
	 * @return the keyspace
	 * @throws IllegalStateException if none was set
	 */
	public String requireKeyspace() {
		if (this.keyspace == null) {
			throw new IllegalStateException("keyspace is not set: call withKeyspace(\"my_keyspace\") "
					+ "(property journal.cassandra.keyspace)");
		}
		return this.keyspace;
	}

	public String eventsTable() {
		return this.eventsTable;
	}

	public String metadataTable() {
		return this.metadataTable;
	}

	public String allIdsTable() {
		return this.allIdsTable;
	}

	public String tagIndexTable() {
		return this.tagIndexTable;
	}

	public String snapshotsTable() {
		return this.snapshotsTable;
	}

	public String durableStateTable() {
		return this.durableStateTable;
	}

	public long partitionSize() {
		return this.partitionSize;
	}

	public boolean autoCreateTables() {
		return this.autoCreateTables;
	}

	public boolean useTagIndex() {
		return this.useTagIndex;
	}

	public TagBucketing tagBucketing() {
		return this.tagBucketing;
	}

	/** @return the segment-aware tag index's slice groups, 0 when it is off */
	public int tagSliceGroups() {
		return this.tagSliceGroups;
	}

	/**
	 * @return the function that puts a persistenceId in its slice (projection segments, the sliced tag index): the
	 * one set with {@link #withSliceHash}, else {@link SliceHash#MURMUR3}, a new keyspace's. The journal's factories
	 * ({@code CassandraJournal.create}, {@code verifyLayout}, {@code CassandraReadJournal.create}) replace an unset
	 * function by the keyspace's recorded one; {@code CassandraJournal.options()} shows the adopted value. Call
	 * {@code verifyLayout} first and build from the options it returns: they set the function, so the factories
	 * do not read the record again
	 */
	public SliceHash sliceHash() {
		SliceHash set = this.sliceHash;
		return (set != null) ? set : SliceHash.MURMUR3;
	}

	/**
	 * @return the function set with {@link #withSliceHash}; empty when left to the keyspace (the journal adopts
	 * the recorded one)
	 */
	public Optional<SliceHash> configuredSliceHash() {
		return Optional.ofNullable(this.sliceHash);
	}

	/**
	 * @return the segment-aware tag index table (when it is on): {@code <tagIndexTable>_sliced<groups>}, or with tag
	 * bucketing {@code <tagIndexTable>_<unit>_sliced<groups>}
	 */
	public String tagIndexSlicedTable() {
		return slicedTable(this.tagIndexTable, this.tagBucketing, this.tagSliceGroups);
	}

	/** @return the table tag index rows are written to: {@link #tagIndexTable()} or its bucketed form */
	public String tagIndexDataTable() {
		return (this.tagBucketing == TagBucketing.NONE) ? this.tagIndexTable
				: this.tagIndexTable + "_" + this.tagBucketing.tableSuffix();
	}

	/** @return the table listing the non-empty buckets of each tag (bucketing only) */
	public String tagBucketsTable() {
		return tagIndexDataTable() + "_buckets";
	}

	public ConsistencyLevel consistency() {
		return this.consistency;
	}

	public boolean lightweightTransactions() {
		return this.lightweightTransactions;
	}

	public Optional<ConsistencyLevel> serialConsistency() {
		return Optional.ofNullable(this.serialConsistency);
	}

	public int persistenceIdBuckets() {
		return this.persistenceIdBuckets;
	}

	public int pageSize() {
		return this.pageSize;
	}

	public Optional<String> localDatacenter() {
		return Optional.ofNullable(this.localDatacenter);
	}

	public Optional<String> username() {
		return Optional.ofNullable(this.username);
	}

	public Optional<String> password() {
		return Optional.ofNullable(this.password);
	}

	public Optional<SSLContext> sslContext() {
		return Optional.ofNullable(this.sslContext);
	}

	/** @return whether TLS connections check the node's host name against its certificate */
	public boolean sslHostnameValidation() {
		return this.sslHostnameValidation;
	}

	public Duration requestTimeout() {
		return this.requestTimeout;
	}

	public Duration startupWait() {
		return this.startupWait;
	}

	public Duration inFlightWait() {
		return this.inFlightWait;
	}

	/** @return how long after a claim was sent its coordinator may still apply it */
	public Duration claimSettleTime() {
		return this.claimSettleTime;
	}

	/** @return how long tag index rows live, zero for ever */
	public Duration tagIndexTtl() {
		return this.tagIndexTtl;
	}

	public Clock clock() {
		return this.clock;
	}

	@Override
	public String toString() {
		return "CassandraJournalOptions[keyspace=" + this.keyspace + ", contactPoints=" + this.contactPoints
				+ ", events=" + this.eventsTable + ", metadata=" + this.metadataTable + ", allIds=" + this.allIdsTable
				+ ", tagIndex=" + this.tagIndexTable + ", partitionSize=" + this.partitionSize + ", useTagIndex="
				+ this.useTagIndex + ", tagBucketing=" + this.tagBucketing + ", tagSliceGroups=" + this.tagSliceGroups + ", sliceHash=" + ((this.sliceHash != null) ? this.sliceHash : "unset") + ", consistency=" + this.consistency + ", lwt=" + this.lightweightTransactions
				+ ", serialConsistency=" + this.serialConsistency + "]";
	}

	private static final class Values {

		List<String> contactPoints = List.of();

		@Nullable String keyspace;

		String eventsTable = "events";

		String metadataTable = "metadata";

		String allIdsTable = "all_persistence_ids";

		String tagIndexTable = "events_by_tag";

		String snapshotsTable = "snapshots";

		String durableStateTable = "durable_state";

		long partitionSize = 500_000;

		boolean autoCreateTables = true;

		boolean useTagIndex;

		TagBucketing tagBucketing = TagBucketing.NONE;

		int tagSliceGroups;

		@Nullable SliceHash sliceHash;

		ConsistencyLevel consistency = DefaultConsistencyLevel.LOCAL_QUORUM;

		boolean lightweightTransactions = true;

		@Nullable ConsistencyLevel serialConsistency;

		int persistenceIdBuckets = 1;

		int pageSize = 1000;

		@Nullable String localDatacenter;

		@Nullable String username;

		@Nullable String password;

		@Nullable SSLContext sslContext;

		boolean sslHostnameValidation = true;

		Duration requestTimeout = Duration.ofSeconds(10);

		Duration startupWait = Duration.ofSeconds(30);

		Duration inFlightWait = Duration.ofSeconds(30);

		Duration claimSettleTime = Duration.ofSeconds(6);

		Duration tagIndexTtl = Duration.ZERO;

		Clock clock = Clock.systemUTC();

		Values() {
		}

		Values(CassandraJournalOptions o) {
			this.contactPoints = o.contactPoints;
			this.keyspace = o.keyspace;
			this.eventsTable = o.eventsTable;
			this.metadataTable = o.metadataTable;
			this.allIdsTable = o.allIdsTable;
			this.tagIndexTable = o.tagIndexTable;
			this.snapshotsTable = o.snapshotsTable;
			this.durableStateTable = o.durableStateTable;
			this.partitionSize = o.partitionSize;
			this.autoCreateTables = o.autoCreateTables;
			this.useTagIndex = o.useTagIndex;
			this.tagBucketing = o.tagBucketing;
			this.tagSliceGroups = o.tagSliceGroups;
			this.sliceHash = o.sliceHash;
			this.consistency = o.consistency;
			this.lightweightTransactions = o.lightweightTransactions;
			this.serialConsistency = o.serialConsistency;
			this.persistenceIdBuckets = o.persistenceIdBuckets;
			this.pageSize = o.pageSize;
			this.localDatacenter = o.localDatacenter;
			this.username = o.username;
			this.password = o.password;
			this.sslContext = o.sslContext;
			this.sslHostnameValidation = o.sslHostnameValidation;
			this.requestTimeout = o.requestTimeout;
			this.startupWait = o.startupWait;
			this.inFlightWait = o.inFlightWait;
			this.claimSettleTime = o.claimSettleTime;
			this.tagIndexTtl = o.tagIndexTtl;
			this.clock = o.clock;
		}

	}

}
