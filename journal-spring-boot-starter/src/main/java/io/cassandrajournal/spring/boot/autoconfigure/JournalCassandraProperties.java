package io.cassandrajournal.spring.boot.autoconfigure;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.entity.EntityRepositories;
import io.cassandrajournal.projection.CassandraDeadLetterQueue;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.projection.RecoveryStrategy;

/**
 * Configuration of the Cassandra journal, bound from {@code journal.cassandra.*}.
 * <p>
 * Defaults are not declared here: each field starts from core's own default ({@link CassandraJournalOptions#create()},
 * {@link ProjectionSettings#defaults()} and the {@code DEFAULT_*} constants), so the starter and the core cannot
 * drift. The configuration metadata documents them through
 * {@code META-INF/additional-spring-configuration-metadata.json}, checked against these values by a test.
 */
@ConfigurationProperties("journal.cassandra")
public class JournalCassandraProperties {

	private static final CassandraJournalOptions DEFAULTS = CassandraJournalOptions.create();

	private static final ProjectionSettings PROJECTION_DEFAULTS = ProjectionSettings.defaults();

	/**
	 * Whether the journal auto-configuration is on.
	 */
	private boolean enabled = true;

	/**
	 * Cassandra nodes to contact, as host:port. When empty, the application's own CqlSession
	 * (spring.cassandra.*) is used.
	 */
	private List<String> contactPoints = new ArrayList<>();

	/**
	 * Existing keyspace holding the journal's tables; the journal creates tables, never the keyspace.
	 */
	private @Nullable String keyspace;

	/**
	 * Data center the driver treats as local; required with contact-points.
	 */
	private @Nullable String localDatacenter;

	/**
	 * User name for PasswordAuthenticator.
	 */
	private @Nullable String username;

	/**
	 * Password for PasswordAuthenticator.
	 */
	private @Nullable String password;

	/**
	 * Whether client connections use TLS with the JVM's default SSL context.
	 */
	private boolean ssl;

	/**
	 * Whether TLS connections check that each node's certificate names the host connected to. Turn off only for
	 * nodes whose certificates do not name them: without the check any certificate from a trusted authority is
	 * accepted.
	 */
	private boolean sslHostnameValidation = DEFAULTS.sslHostnameValidation();

	/**
	 * How long one request may take before it fails.
	 */
	private Duration requestTimeout = DEFAULTS.requestTimeout();

	/**
	 * How long start-up keeps trying to reach the contact points before it fails (the journal's own
	 * session only; 0 fails at the first attempt). Lets an application start a little before its Cassandra.
	 */
	private Duration startupWait = DEFAULTS.startupWait();

	/**
	 * How long after its claim a sequence number without a visible event is waited for by entity loads,
	 * entity projections and deleteTo (with the tag index; without it, only a hole at the end of a range whose
	 * last number shows no event and, with client-side time stamps, no event above it in its partition either; with
	 * server-side time stamps, every hole of such a range) (another writer's append between claim and batch)
	 * before it counts as a crash gap, is sealed (its batch never appears later) and is stepped over; an append
	 * whose rows complete later than this after its claim is reported as uncertain. 0 never waits nor seals; other
	 * values under 100ms are refused. Keep it well above claim-settle-time: a failed append's claim release is sent
	 * with a request timeout of what is left of this after claim-settle-time, and not with less than 500 ms.
	 */
	private Duration inFlightWait = DEFAULTS.inFlightWait();

	/**
	 * How long after a claim was sent its coordinator may still apply it: 6 s covers Cassandra 5.0's built-in Paxos
	 * v1 (its read before proposing may end read_request_timeout, 5 s, after the request started, plus 1 s); Paxos v2
	 * stops at the longer of cas_contention_timeout and write_request_timeout (3 s covers the built-in 1.8 s and 2 s).
	 * A claim that failed without an answer (a lost connection, a client-side timeout) is resolved by a serial read
	 * of the head only once this has passed since it was sent; a failed append's claim release is sent with a
	 * request timeout short enough that it cannot apply after the writer's deadline even this long after its last
	 * attempt. 0 reads at once;
	 * otherwise 1s to 1m.
	 */
	private Duration claimSettleTime = DEFAULTS.claimSettleTime();

	/**
	 * How long a tag index row lives after it is written (per-row TTL; 0 keeps rows for ever). Tag queries and
	 * projections then see only that period; events stay in the journal. Whole seconds, at most 20 years.
	 */
	private Duration tagIndexTtl = DEFAULTS.tagIndexTtl();

	/**
	 * Name of the events table.
	 */
	private String eventsTable = DEFAULTS.eventsTable();

	/**
	 * Name of the table holding each persistenceId's highest claimed sequence number.
	 */
	private String metadataTable = DEFAULTS.metadataTable();

	/**
	 * Name of the table behind the persistenceId queries.
	 */
	private String allIdsTable = DEFAULTS.allIdsTable();

	/**
	 * Name of the tag index side table.
	 */
	private String tagIndexTable = DEFAULTS.tagIndexTable();

	/**
	 * Name of the snapshots table.
	 */
	private String snapshotsTable = DEFAULTS.snapshotsTable();

	/**
	 * Name of the durable state table (projection offsets live there).
	 */
	private String durableStateTable = DEFAULTS.durableStateTable();

	/**
	 * Rows per events partition before a persistenceId rolls over to the next partition_nr. Must match every
	 * writer sharing the keyspace.
	 */
	private long partitionSize = DEFAULTS.partitionSize();

	/**
	 * Whether missing tables are created at start-up; when false, start-up fails naming the missing table.
	 */
	private boolean autoCreateTables = DEFAULTS.autoCreateTables();

	/**
	 * Whether appends also write the events_by_tag index.
	 */
	private boolean useTagIndex = DEFAULTS.useTagIndex();

	/**
	 * How the tag index is partitioned: NONE (the reference events_by_tag table, one partition per tag) or
	 * MINUTE, HOUR, DAY (one partition per tag and time bucket, in <tag-index-table>_<unit> plus a
	 * <tag-index-table>_<unit>_buckets list).
	 */
	private TagBucketing tagBucketing = DEFAULTS.tagBucketing();

	/**
	 * Slice groups of the segment-aware tag index: 0 (off) or a power of two from 2 to 1024. When set, each tag
	 * row is also written to <tag-index-table>_sliced<groups>, partitioned by the persistenceId's slice group, so
	 * each segment of a projection shared by several instances reads only its own entities' rows (16 suits up to
	 * 16 segments). Not combined with tag-bucketing yet.
	 */
	private int tagSliceGroups = DEFAULTS.tagSliceGroups();

	/**
	 * Function that puts a persistenceId in one of the 1024 slices projection segments and the segment-aware tag
	 * index split entities by: MURMUR3 (murmur3_32 of the UTF-8 bytes, even for sequential ids) or STRING_HASH
	 * (|String.hashCode % 1024|, the function of keyspaces whose layout was recorded before this property
	 * existed). Recorded with the layout. Unset: the keyspace's recorded function, MURMUR3 for a new keyspace; set
	 * to another value than the keyspace's, the instance is refused.
	 */
	private @Nullable SliceHash sliceHash;

	/**
	 * Consistency level of every read and write, by name (LOCAL_QUORUM) or by the driver's numeric code (6).
	 */
	private DefaultConsistencyLevel consistency = (DefaultConsistencyLevel) DEFAULTS.consistency();

	/**
	 * Whether appends claim their sequence range with a lightweight transaction. Turning it off is unsafe
	 * with more than one writer per persistenceId.
	 */
	private boolean lightweightTransactions = DEFAULTS.lightweightTransactions();

	/**
	 * Paxos consistency of the append claim (SERIAL or LOCAL_SERIAL, or 8 / 9); unset leaves the driver's
	 * SERIAL. Use LOCAL_SERIAL on a multi-DC keyspace.
	 */
	private @Nullable DefaultConsistencyLevel serialConsistency;

	/**
	 * Number of all_persistence_ids partitions new ids are spread over. 1 keeps the reference layout
	 * (tag '_all').
	 */
	private int persistenceIdBuckets = DEFAULTS.persistenceIdBuckets();

	/**
	 * Rows fetched per page by replays and queries.
	 */
	private int pageSize = DEFAULTS.pageSize();

	/**
	 * Embedded development node.
	 */
	private final Embedded embedded = new Embedded();

	/**
	 * Projection defaults and the projection engine.
	 */
	private final Projections projections = new Projections();

	/**
	 * Defaults of the EntityRepositories bean.
	 */
	private final Entities entities = new Entities();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public List<String> getContactPoints() {
		return this.contactPoints;
	}

	public void setContactPoints(List<String> contactPoints) {
		this.contactPoints = contactPoints;
	}

	public @Nullable String getKeyspace() {
		return this.keyspace;
	}

	public void setKeyspace(@Nullable String keyspace) {
		this.keyspace = keyspace;
	}

	public @Nullable String getLocalDatacenter() {
		return this.localDatacenter;
	}

	public void setLocalDatacenter(@Nullable String localDatacenter) {
		this.localDatacenter = localDatacenter;
	}

	public @Nullable String getUsername() {
		return this.username;
	}

	public void setUsername(@Nullable String username) {
		this.username = username;
	}

	public @Nullable String getPassword() {
		return this.password;
	}

	public void setPassword(@Nullable String password) {
		this.password = password;
	}

	public boolean isSsl() {
		return this.ssl;
	}

	public void setSsl(boolean ssl) {
		this.ssl = ssl;
	}

	public boolean isSslHostnameValidation() {
		return this.sslHostnameValidation;
	}

	public void setSslHostnameValidation(boolean sslHostnameValidation) {
		this.sslHostnameValidation = sslHostnameValidation;
	}

	public Duration getInFlightWait() {
		return this.inFlightWait;
	}

	public void setInFlightWait(Duration inFlightWait) {
		this.inFlightWait = inFlightWait;
	}

	public Duration getClaimSettleTime() {
		return this.claimSettleTime;
	}

	public void setClaimSettleTime(Duration claimSettleTime) {
		this.claimSettleTime = claimSettleTime;
	}

	public Duration getTagIndexTtl() {
		return this.tagIndexTtl;
	}

	public void setTagIndexTtl(Duration tagIndexTtl) {
		this.tagIndexTtl = tagIndexTtl;
	}

	public Duration getStartupWait() {
		return this.startupWait;
	}

	public void setStartupWait(Duration startupWait) {
		this.startupWait = startupWait;
	}

	public Duration getRequestTimeout() {
		return this.requestTimeout;
	}

	public void setRequestTimeout(Duration requestTimeout) {
		this.requestTimeout = requestTimeout;
	}

	public String getEventsTable() {
		return this.eventsTable;
	}

	public void setEventsTable(String eventsTable) {
		this.eventsTable = eventsTable;
	}

	public String getMetadataTable() {
		return this.metadataTable;
	}

	public void setMetadataTable(String metadataTable) {
		this.metadataTable = metadataTable;
	}

	public String getAllIdsTable() {
		return this.allIdsTable;
	}

	public void setAllIdsTable(String allIdsTable) {
		this.allIdsTable = allIdsTable;
	}

	public String getTagIndexTable() {
		return this.tagIndexTable;
	}

	public void setTagIndexTable(String tagIndexTable) {
		this.tagIndexTable = tagIndexTable;
	}

	public String getSnapshotsTable() {
		return this.snapshotsTable;
	}

	public void setSnapshotsTable(String snapshotsTable) {
		this.snapshotsTable = snapshotsTable;
	}

	public String getDurableStateTable() {
		return this.durableStateTable;
	}

	public void setDurableStateTable(String durableStateTable) {
		this.durableStateTable = durableStateTable;
	}

	public long getPartitionSize() {
		return this.partitionSize;
	}

	public void setPartitionSize(long partitionSize) {
		this.partitionSize = partitionSize;
	}

	public boolean isAutoCreateTables() {
		return this.autoCreateTables;
	}

	public void setAutoCreateTables(boolean autoCreateTables) {
		this.autoCreateTables = autoCreateTables;
	}

	public boolean isUseTagIndex() {
		return this.useTagIndex;
	}

	public void setUseTagIndex(boolean useTagIndex) {
		this.useTagIndex = useTagIndex;
	}

	public TagBucketing getTagBucketing() {
		return this.tagBucketing;
	}

	public void setTagBucketing(TagBucketing tagBucketing) {
		this.tagBucketing = tagBucketing;
	}

	public @Nullable SliceHash getSliceHash() {
		return this.sliceHash;
	}

	public void setSliceHash(@Nullable SliceHash sliceHash) {
		this.sliceHash = sliceHash;
	}

	public int getTagSliceGroups() {
		return this.tagSliceGroups;
	}

	public void setTagSliceGroups(int tagSliceGroups) {
		this.tagSliceGroups = tagSliceGroups;
	}

	public DefaultConsistencyLevel getConsistency() {
		return this.consistency;
	}

	public void setConsistency(DefaultConsistencyLevel consistency) {
		this.consistency = consistency;
	}

	public boolean isLightweightTransactions() {
		return this.lightweightTransactions;
	}

	public void setLightweightTransactions(boolean lightweightTransactions) {
		this.lightweightTransactions = lightweightTransactions;
	}

	public @Nullable DefaultConsistencyLevel getSerialConsistency() {
		return this.serialConsistency;
	}

	public void setSerialConsistency(@Nullable DefaultConsistencyLevel serialConsistency) {
		this.serialConsistency = serialConsistency;
	}

	public int getPersistenceIdBuckets() {
		return this.persistenceIdBuckets;
	}

	public void setPersistenceIdBuckets(int persistenceIdBuckets) {
		this.persistenceIdBuckets = persistenceIdBuckets;
	}

	public int getPageSize() {
		return this.pageSize;
	}

	public void setPageSize(int pageSize) {
		this.pageSize = pageSize;
	}

	public Embedded getEmbedded() {
		return this.embedded;
	}

	public Projections getProjections() {
		return this.projections;
	}

	public Entities getEntities() {
		return this.entities;
	}

	/**
	 * Defaults of the repositories the EntityRepositories bean creates.
	 */
	public static class Entities {

		/**
		 * How many times a command runs again after losing a concurrent append.
		 */
		private int maxRetries = EntityRepositories.DEFAULT_MAX_RETRIES;

		/**
		 * Entity states kept in memory per repository (least recently used go first); 0 loads every entity
		 * on every command. A stale state is caught by the append's lightweight transaction.
		 */
		private int cacheSize = EntityRepositories.DEFAULT_CACHE_SIZE;

		public int getMaxRetries() {
			return this.maxRetries;
		}

		public void setMaxRetries(int maxRetries) {
			this.maxRetries = maxRetries;
		}

		public int getCacheSize() {
			return this.cacheSize;
		}

		public void setCacheSize(int cacheSize) {
			this.cacheSize = cacheSize;
		}

	}

	/**
	 * Defaults of every projection (a @ProjectionHandler may override some) and the engine that runs them.
	 */
	public static class Projections {

		/**
		 * Whether @ProjectionHandler methods are discovered and run.
		 */
		private boolean enabled = true;

		/**
		 * How long an idle projection waits before reading again; appends of this application wake matching
		 * projections at once.
		 */
		private Duration pollInterval = PROJECTION_DEFAULTS.pollInterval();

		/**
		 * What a projection does when its handler fails: retry-and-fail, retry-and-skip, fail or skip.
		 */
		private RecoveryStrategy recoveryStrategy = PROJECTION_DEFAULTS.recoveryStrategy();

		/**
		 * Retries after the first failed attempt.
		 */
		private int maxRetries = PROJECTION_DEFAULTS.maxRetries();

		/**
		 * Delay before the first retry, doubled for each further retry.
		 */
		private Duration retryBackoff = PROJECTION_DEFAULTS.retryBackoff();

		/**
		 * Cap of the retry delay.
		 */
		private Duration maxRetryBackoff = PROJECTION_DEFAULTS.maxRetryBackoff();

		/**
		 * How far behind real time a tag feed's head read stops; 0 gives the lowest latency.
		 */
		private Duration consistencyWindow = PROJECTION_DEFAULTS.feed().consistencyWindow();

		/**
		 * How late an event may become visible in the tag index and still be delivered (the trailing sweep); 0
		 * turns the sweep off, which is unsafe with several writers or clock skew.
		 */
		private Duration backtrackWindow = PROJECTION_DEFAULTS.feed().backtrackWindow();

		/**
		 * How long after their claim a projection by persistenceId reads again the sequence numbers it stepped over
		 * as a crash gap, delivering an event that appears there late (out of per-entity order); 0 turns it off.
		 */
		private Duration crashGapRecheckWindow = PROJECTION_DEFAULTS.crashGapRecheckWindow();

		/**
		 * Events read per batch; the cursor is stored after each batch.
		 */
		private int pageSize = PROJECTION_DEFAULTS.feed().pageSize();

		/**
		 * Whether later events of a persistenceId with a dead letter are parked behind it until redelivered.
		 */
		private boolean parkAfterDeadLetter = PROJECTION_DEFAULTS.parkAfterDeadLetter();

		/**
		 * Threads shared by all projections.
		 */
		private int threads = ProjectionEngine.Builder.DEFAULT_THREADS;

		/**
		 * Events of one projection handled at the same time, spread over lanes by persistenceId (one entity's
		 * events never run in parallel). 1 handles them one after the other.
		 */
		private int concurrency = PROJECTION_DEFAULTS.concurrency();

		/**
		 * Whether skipped events are kept in a Cassandra dead-letter table.
		 */
		private boolean deadLetterQueue = true;

		/**
		 * Name of the dead-letter table.
		 */
		private String deadLetterTable = CassandraDeadLetterQueue.DEFAULT_TABLE;

		/**
		 * Which projection state turns the projections health DOWN: failed, failing or never. With sharing, a
		 * segment without an owner for longer than the lease timeout turns it DOWN too, unless never.
		 */
		private HealthDownWhen healthDownWhen = HealthDownWhen.FAILED;

		/**
		 * Segments a by-tag projection is split into by persistenceId slice, a power of two from 1 to 1024; a
		 * @ProjectionHandler(segments = ...) sets its own. Projections of one persistenceId always have one.
		 */
		private int segments = PROJECTION_DEFAULTS.segments();

		/**
		 * Projections shared by the instances of this application.
		 */
		private final Sharing sharing = new Sharing();

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Duration getPollInterval() {
			return this.pollInterval;
		}

		public void setPollInterval(Duration pollInterval) {
			this.pollInterval = pollInterval;
		}

		public RecoveryStrategy getRecoveryStrategy() {
			return this.recoveryStrategy;
		}

		public void setRecoveryStrategy(RecoveryStrategy recoveryStrategy) {
			this.recoveryStrategy = recoveryStrategy;
		}

		public int getMaxRetries() {
			return this.maxRetries;
		}

		public void setMaxRetries(int maxRetries) {
			this.maxRetries = maxRetries;
		}

		public Duration getRetryBackoff() {
			return this.retryBackoff;
		}

		public void setRetryBackoff(Duration retryBackoff) {
			this.retryBackoff = retryBackoff;
		}

		public Duration getMaxRetryBackoff() {
			return this.maxRetryBackoff;
		}

		public void setMaxRetryBackoff(Duration maxRetryBackoff) {
			this.maxRetryBackoff = maxRetryBackoff;
		}

		public Duration getConsistencyWindow() {
			return this.consistencyWindow;
		}

		public void setConsistencyWindow(Duration consistencyWindow) {
			this.consistencyWindow = consistencyWindow;
		}

		public Duration getBacktrackWindow() {
			return this.backtrackWindow;
		}

		public void setBacktrackWindow(Duration backtrackWindow) {
			this.backtrackWindow = backtrackWindow;
		}

		public Duration getCrashGapRecheckWindow() {
			return this.crashGapRecheckWindow;
		}

		public void setCrashGapRecheckWindow(Duration crashGapRecheckWindow) {
			this.crashGapRecheckWindow = crashGapRecheckWindow;
		}

		public int getPageSize() {
			return this.pageSize;
		}

		public void setPageSize(int pageSize) {
			this.pageSize = pageSize;
		}

		public boolean isParkAfterDeadLetter() {
			return this.parkAfterDeadLetter;
		}

		public void setParkAfterDeadLetter(boolean parkAfterDeadLetter) {
			this.parkAfterDeadLetter = parkAfterDeadLetter;
		}

		public int getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(int concurrency) {
			this.concurrency = concurrency;
		}

		public int getThreads() {
			return this.threads;
		}

		public void setThreads(int threads) {
			this.threads = threads;
		}

		public boolean isDeadLetterQueue() {
			return this.deadLetterQueue;
		}

		public void setDeadLetterQueue(boolean deadLetterQueue) {
			this.deadLetterQueue = deadLetterQueue;
		}

		public String getDeadLetterTable() {
			return this.deadLetterTable;
		}

		public void setDeadLetterTable(String deadLetterTable) {
			this.deadLetterTable = deadLetterTable;
		}

		public HealthDownWhen getHealthDownWhen() {
			return this.healthDownWhen;
		}

		public void setHealthDownWhen(HealthDownWhen healthDownWhen) {
			this.healthDownWhen = healthDownWhen;
		}

		public int getSegments() {
			return this.segments;
		}

		public void setSegments(int segments) {
			this.segments = segments;
		}

		public Sharing getSharing() {
			return this.sharing;
		}

		/**
		 * Several instances sharing the projections: each segment runs on one instance at a time, under a lease
		 * row in Cassandra, and its cursor writes are fenced by the lease's epoch.
		 */
		public static class Sharing {

			/**
			 * Whether the instances of this application share its projections (each segment on one instance at a
			 * time). Off: this instance runs every segment of every projection and takes no lease.
			 */
			private boolean enabled;

			/**
			 * This instance's id among those sharing the projections, unique per running instance. Unset: the host
			 * name, the process id and a random suffix.
			 */
			private @Nullable String instanceId;

			/**
			 * How long an owner's lease may go unrenewed before another instance takes its segments: a dead
			 * instance's segments stand still this long.
			 */
			private Duration leaseTimeout = ProjectionSharing.DEFAULT_LEASE_TIMEOUT;

			/**
			 * How often an owner renews its leases and heartbeat; at most a third of the lease timeout.
			 */
			private Duration renewInterval = ProjectionSharing.DEFAULT_RENEW_INTERVAL;

			public boolean isEnabled() {
				return this.enabled;
			}

			public void setEnabled(boolean enabled) {
				this.enabled = enabled;
			}

			public @Nullable String getInstanceId() {
				return this.instanceId;
			}

			public void setInstanceId(@Nullable String instanceId) {
				this.instanceId = instanceId;
			}

			public Duration getLeaseTimeout() {
				return this.leaseTimeout;
			}

			public void setLeaseTimeout(Duration leaseTimeout) {
				this.leaseTimeout = leaseTimeout;
			}

			public Duration getRenewInterval() {
				return this.renewInterval;
			}

			public void setRenewInterval(Duration renewInterval) {
				this.renewInterval = renewInterval;
			}

		}

	}

	/**
	 * Which projection state makes the projections health indicator report DOWN.
	 */
	public enum HealthDownWhen {

		/** A projection stopped by its recovery strategy. */
		FAILED,

		/** A projection retrying a failed event, or stopped. */
		FAILING,

		/** Never: report states as details only. */
		NEVER

	}

	/**
	 * A real Cassandra node started by the application itself (development and tests).
	 */
	public static class Embedded {

		/**
		 * Whether to start a Cassandra node in a child JVM when nothing answers CQL on the configured contact
		 * point. Needs io.cassandrajournal:cassandra-launcher on the classpath.
		 */
		private boolean enabled;

		/**
		 * CQL port of the embedded node; 0 picks a free one. Defaults to the port of the first configured
		 * contact point (journal.cassandra or spring.cassandra), else 9042.
		 */
		private @Nullable Integer port;

		/**
		 * Directory that keeps the node's data across runs. When unset, a temporary directory is used and
		 * deleted when the application stops.
		 */
		private @Nullable Path directory;

		/**
		 * Whether to use a temporary directory (deleted when the JVM exits) even if a directory is set; handy
		 * in tests of an application whose configuration names a persistent one.
		 */
		private boolean temporary;

		/**
		 * Maximum heap of the node's JVM.
		 */
		private String maxHeap = "1g";

		/**
		 * How long to wait for the node to answer CQL.
		 */
		private Duration startupTimeout = Duration.ofMinutes(2);

		/**
		 * Whether to create the configured keyspace on the embedded node (replication factor 1, or the smaller of
		 * nodes and 3 for a local cluster).
		 */
		private boolean createKeyspace = true;

		/**
		 * Number of embedded nodes, 1 to 9. More than one starts a local cluster on 127.0.0.1 .. 127.0.0.N (free
		 * ports, temporary data; loopback addresses beyond 127.0.0.1 exist on Linux, other systems need aliases),
		 * for trying what the journal does when a node dies.
		 */
		private int nodes = 1;

		public int getNodes() {
			return this.nodes;
		}

		public void setNodes(int nodes) {
			this.nodes = nodes;
		}

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public @Nullable Integer getPort() {
			return this.port;
		}

		public void setPort(@Nullable Integer port) {
			this.port = port;
		}

		public @Nullable Path getDirectory() {
			return this.directory;
		}

		public void setDirectory(@Nullable Path directory) {
			this.directory = directory;
		}

		public boolean isTemporary() {
			return this.temporary;
		}

		public void setTemporary(boolean temporary) {
			this.temporary = temporary;
		}

		public String getMaxHeap() {
			return this.maxHeap;
		}

		public void setMaxHeap(String maxHeap) {
			this.maxHeap = maxHeap;
		}

		public Duration getStartupTimeout() {
			return this.startupTimeout;
		}

		public void setStartupTimeout(Duration startupTimeout) {
			this.startupTimeout = startupTimeout;
		}

		public boolean isCreateKeyspace() {
			return this.createKeyspace;
		}

		public void setCreateKeyspace(boolean createKeyspace) {
			this.createKeyspace = createKeyspace;
		}

	}

}
