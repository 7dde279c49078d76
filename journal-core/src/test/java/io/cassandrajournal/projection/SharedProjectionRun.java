package io.cassandrajournal.projection;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.awaitility.Awaitility.await;

/**
 * A projection of 16 segments shared by three application JVMs ({@link SharedProjectionMain}) on a real node,
 * under continuous appends from this JVM: every {@link #KILL_EVERY} one instance is killed with SIGKILL and
 * started again (a new instance id, as a restarted pod gets); once, another instance is stopped with SIGSTOP
 * until the others hold all its segments (past its lease), then resumed with SIGCONT. Meanwhile this JVM polls
 * the lease rows and notes which instance held each (segment, epoch). At the end: the read model against the
 * fold of the journal, every recorded cursor write against the rules (see {@link Report}), and the events
 * handled more than once, counted. On a cluster ({@link #run(TestKeyspace, Duration, Path, ClusterNodeStops)},
 * {@link SharedProjectionClusterIT}) Cassandra nodes are stopped too, and the waits are twice as long.
 */
final class SharedProjectionRun {

	static final String PROJECTION = "multi-jvm-balances";

	static final int SEGMENTS = 16;

	static final int PAGE_SIZE = 20;

	/**
	 * The tag feed's backtrack window: a new owner re-reads this window behind its stored cursor. One writer on
	 * one node needs little; 1 s keeps that re-reading small (about 50 appends a second over 16 segments).
	 */
	static final Duration BACKTRACK = Duration.ofSeconds(1);

	/** Long enough that a loaded 2-core machine (five JVMs) does not lose leases to scheduling stalls. */
	static final Duration LEASE_TIMEOUT = Duration.ofSeconds(5);

	static final Duration RENEW_INTERVAL = Duration.ofSeconds(1);

	static final Duration KILL_EVERY = Duration.ofSeconds(20);

	static final int ENTITIES = 64;

	/**
	 * {@code -Dshared.slice-groups=16} runs the instances with the segment-aware tag index
	 * ({@code tag-slice-groups}): each segment then reads only its slice groups' partitions. Default 0 (off), as in
	 * the default suite; handed on to the instances' JVMs.
	 */
	static final int SLICE_GROUPS = Integer.getInteger("shared.slice-groups", 0);

	/** The slice function the instances' segments use (the options' default). */
	static final SliceHash SLICE_HASH = CassandraJournalOptions.create().sliceHash();

	static final String UPSERT_READ_MODEL = "INSERT INTO multi_jvm_view (persistence_id, sequence_nr, amount) "
			+ "VALUES (?, ?, ?)";

	static final String COUNT_DELIVERY = "UPDATE multi_jvm_deliveries SET n = n + 1 WHERE persistence_id = ? "
			+ "AND sequence_nr = ?";

	private static final String[] NAMES = { "a", "b", "c" };

	/**
	 * One cursor write an instance attempted, as recorded in its saves file.
	 *
	 * @param instance the instance id (one per JVM started)
	 * @param key the cursor's durable-state key (one per segment)
	 * @param revision the revision written (compare-and-set on the one before)
	 * @param epoch the lease epoch it was written under
	 * @param offset the cursor
	 * @param outcome {@link #APPLIED}, {@link #REFUSED} (a conflict: fenced) or {@link #UNKNOWN} (an error)
	 */
	record Save(String instance, String key, long revision, long epoch, TagOffset offset, String outcome) {

		static final String APPLIED = "applied";

		static final String REFUSED = "refused";

		static final String UNKNOWN = "unknown";

		String line() {
			return String.join("\t", this.instance, this.key, Long.toString(this.revision), Long.toString(this.epoch),
					Long.toString(this.offset.timestamp()), this.offset.persistenceId(),
					Long.toString(this.offset.sequenceNr()), this.outcome);
		}

		static Optional<Save> parse(String line) {
			String[] f = line.split("\t", -1);
			if (f.length != 8 || !List.of(APPLIED, REFUSED, UNKNOWN).contains(f[7])) {
				return Optional.empty(); // the line a SIGKILL cut short
			}
			return Optional.of(new Save(f[0], f[1], Long.parseLong(f[2]), Long.parseLong(f[3]),
					new TagOffset(Long.parseLong(f[4]), f[5], Long.parseLong(f[6])), f[7]));
		}

		boolean applied() {
			return APPLIED.equals(this.outcome);
		}

	}

	/**
	 * What a run did and found.
	 *
	 * @param appended events appended
	 * @param kills SIGKILLs
	 * @param stopped the instance stopped with SIGSTOP, and how long until all its segments had other owners
	 * @param saves cursor writes recorded, by outcome
	 * @param violations broken cursor rules, each described (empty when all hold)
	 * @param ownerChanges lease takes after each segment's first (from the final lease epochs): takeovers from dead
	 * owners and hand-overs between live ones
	 * @param takenFromDead segments a killed or stopped instance held: each taken over from a dead owner
	 * @param failovers per SIGKILL, from the kill until no lease names the killed instance
	 * @param deliveries handler calls that completed their writes
	 * @param handledTwice deliveries beyond the first of each event
	 * @param readModelMatches whether the read model equals the fold of the journal
	 * @param appendsFailed appends that failed (only while a Cassandra node was down); each was followed by a read of
	 * the entity's head, and the fold of the journal decides whether it was stored
	 * @param nodeStops Cassandra nodes stopped (0 on one node)
	 * @param summary printable
	 */
	record Report(long appended, int kills, Duration stopped, Map<String, Long> saves, List<String> violations,
			long ownerChanges, int takenFromDead, List<Duration> failovers, long deliveries, long handledTwice,
			boolean readModelMatches, long appendsFailed, int nodeStops, String summary) {
	}

	private final TestKeyspace keyspace;

	private final Path work;

	private final String tag = "multi-jvm-" + System.nanoTime();

	private final CassandraJournal journal;

	private final LeaseTable leases;

	private final Map<String, Process> running = new HashMap<>();

	/** Cassandra node stops during the run, on a cluster; null on one node. */
	private final @Nullable ClusterNodeStops nodeStops;

	/** Factor on the waits' bounds: 2 on a cluster (three nodes and a node restart on the same 2 cores), else 1. */
	private final int slack;

	private final List<String> instanceIds = new CopyOnWriteArrayList<>();

	/** Instances whose start-up failed and that were started again (on a cluster), the first line of each. */
	private final List<String> startFailures = new CopyOnWriteArrayList<>();

	/** (segment key, epoch) to the owner seen in the lease row; a second owner for one epoch is a violation. */
	private final Map<String, String> ownerByEpoch = new ConcurrentHashMap<>();

	private final List<String> violations = new CopyOnWriteArrayList<>();

	private int incarnations;

	/** Segments a killed or stopped instance held at that moment: each is taken over from a dead owner. */
	private int takenFromDead;

	/** Per SIGKILL: from the kill until no lease names the killed instance. */
	private final List<Duration> failovers = new ArrayList<>();

	private SharedProjectionRun(TestKeyspace keyspace, Path work, @Nullable ClusterNodeStops nodeStops) {
		this.keyspace = keyspace;
		this.work = work;
		this.nodeStops = nodeStops;
		this.slack = (nodeStops == null) ? 1 : 2;
		CassandraJournalOptions options = options(keyspace.name());
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		this.journal = CassandraJournal.create(keyspace.session(), options, serializer);
		CassandraDurableStateStore.create(keyspace.session(), options, serializer);
		this.leases = LeaseTable.create(keyspace.session(), options);
		createReadModel(keyspace.session());
	}

	/**
	 * @return the persistenceId of the run's entity {@code n}: {@code <tag>-account-<n>-<k>} with the first
	 * {@code k} that puts it in segment {@code n % SEGMENTS}, so every segment has {@code ENTITIES / SEGMENTS}
	 * entities (ids differing only in a counted suffix have nearby slices and fell in 3 to 6 of the 16 segments)
	 */
	static String entity(String tag, int n) {
		int slicesPerSegment = SliceRange.SLICES / SEGMENTS;
		for (int k = 0;; k++) {
			String id = tag + "-account-" + n + "-" + k;
			if (SLICE_HASH.slice(id) / slicesPerSegment == n % SEGMENTS) {
				return id;
			}
		}
	}

	/** @return a new directory under target for the instances' saves files and output, kept for a look after a run */
	static Path workDirectory() throws IOException {
		return Files.createDirectories(Path.of("target", "shared-projection-runs", Long.toString(System.currentTimeMillis())));
	}

	static CassandraJournalOptions options(String keyspace) {
		return CassandraJournalOptions.create().withKeyspace(keyspace).withUseTagIndex(true)
			.withTagSliceGroups(SLICE_GROUPS);
	}

	/**
	 * @param keyspace an empty keyspace on the node
	 * @param duration how long the kills go on (one every {@link #KILL_EVERY})
	 * @param work where the instances' saves files and output go
	 * @return the report
	 */
	static Report run(TestKeyspace keyspace, Duration duration, Path work) throws Exception {
		return new SharedProjectionRun(keyspace, work, null).run(duration);
	}

	/**
	 * The run on a cluster, with Cassandra node stops besides the instances' kills and pause.
	 * @param keyspace an empty keyspace on the cluster, with the journal's, the durable state's, the lease and
	 * member tables and the read model's created and known to every node
	 * @param duration how long the kills go on
	 * @param work where the instances' saves files and output go
	 * @param nodeStops the node stops, started with the kills
	 * @return the report
	 */
	static Report run(TestKeyspace keyspace, Duration duration, Path work, ClusterNodeStops nodeStops)
			throws Exception {
		return new SharedProjectionRun(keyspace, work, nodeStops).run(duration);
	}

	/** Creates the read model's tables (if not there). */
	static void createReadModel(CqlSession session) {
		session.execute("CREATE TABLE IF NOT EXISTS multi_jvm_view (persistence_id text, sequence_nr bigint, "
				+ "amount bigint, PRIMARY KEY (persistence_id, sequence_nr))");
		session.execute("CREATE TABLE IF NOT EXISTS multi_jvm_deliveries (persistence_id text, "
				+ "sequence_nr bigint, n counter, PRIMARY KEY (persistence_id, sequence_nr))");
	}

	private Report run(Duration duration) throws Exception {
		Appender appender = new Appender();
		Thread appending = new Thread(appender::run, "appender");
		AtomicBoolean polling = new AtomicBoolean(true);
		Thread leasePoller = new Thread(() -> pollLeases(polling), "lease-poller");
		int kills = 0;
		Duration stopped;
		StringBuilder log = new StringBuilder();
		try {
			for (String name : NAMES) {
				start(name);
			}
			appending.start();
			leasePoller.start();
			// Bound: members count as live after a couple of beats, each takes its share on its next renewals.
			await("all segments owned by running instances").atMost(Duration.ofSeconds(60L * this.slack))
				.pollInterval(Duration.ofMillis(200))
				.until(() -> ownedByRunning() == SEGMENTS);
			await("progress").atMost(Duration.ofSeconds(60L * this.slack))
				.pollInterval(Duration.ofMillis(500))
				.ignoreExceptions()
				.until(() -> viewRows() > 50);

			long begin = System.nanoTime();
			long end = begin + duration.toNanos();
			int tick = 0;
			stopped = Duration.ZERO;
			if (this.nodeStops != null) {
				this.nodeStops.start(begin, end);
			}
			while (System.nanoTime() < end) {
				tick++;
				// The kill schedule is timed (the one fixed wait): the next kill lands KILL_EVERY after the last.
				long next = begin + KILL_EVERY.toNanos() * tick;
				while (System.nanoTime() < next) {
					LockSupport.parkNanos(next - System.nanoTime());
				}
				String victim = NAMES[(tick - 1) % NAMES.length];
				String victimId = latest(victim);
				long held = owners().values().stream().filter(victimId::equals).count();
				this.running.get(victim).destroyForcibly().waitFor(30, TimeUnit.SECONDS);
				long killed = System.nanoTime();
				kills++;
				this.takenFromDead += (int) held;
				log.append(String.format("  %5.1f s: SIGKILL %s holding %d segments (%d view rows)%n", seconds(begin),
						victimId, held, viewRowsForLog()));
				start(victim);
				// Bound: the lease timeout on the others' clocks, then their next renewal; generous for a loaded machine.
				await("segments of the killed " + victimId + " taken").atMost(LEASE_TIMEOUT.multipliedBy(4L * this.slack))
					.pollInterval(Duration.ofMillis(100))
					.until(() -> owners().values().stream().noneMatch(victimId::equals));
				this.failovers.add(Duration.ofNanos(System.nanoTime() - killed));
				if (tick == 1) {
					// Once, between two kills: another instance is paused past its lease, then resumed.
					String frozen = NAMES[tick % NAMES.length];
					stopped = pause(frozen, log, begin);
				}
			}
			if (this.nodeStops != null) {
				this.nodeStops.finish();
			}
			appender.stop();
			appending.join(30_000);
			// Bound: the owners catch up with the last appends (a takeover at most a lease timeout away).
			await("read model equals the fold of the journal").atMost(Duration.ofSeconds(90L * this.slack))
				.pollInterval(Duration.ofMillis(500))
				.ignoreExceptions()
				.until(() -> readModel().equals(journalFold(appender).model()));
		}
		finally {
			if (this.nodeStops != null) {
				this.nodeStops.cancel();
			}
			appender.stop();
			polling.set(false);
			for (Process process : this.running.values()) {
				process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
			}
			leasePoller.join(10_000);
		}
		return report(appender, kills, stopped, log);
	}

	private Duration pause(String name, StringBuilder log, long begin) throws Exception {
		Process process = this.running.get(name);
		String frozenId = latest(name);
		this.takenFromDead += (int) owners().values().stream().filter(frozenId::equals).count();
		signal(process, "STOP");
		long stoppedAt = System.nanoTime();
		log.append(String.format("  %5.1f s: SIGSTOP %s%n", seconds(begin), frozenId));
		try {
			// Bound: the others see its beat and leases unchanged for the lease timeout, then take on their next
			// renewal; plus a restarted instance's start-up on a loaded machine.
			await("segments of the stopped " + frozenId + " taken by others").atMost(LEASE_TIMEOUT.multipliedBy(6L * this.slack))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> owners().values().stream().noneMatch(frozenId::equals) && ownedByRunning() == SEGMENTS);
		}
		finally {
			signal(process, "CONT");
		}
		Duration taken = Duration.ofNanos(System.nanoTime() - stoppedAt);
		log.append(String.format("  %5.1f s: SIGCONT %s; its segments had other owners after %d ms%n", seconds(begin),
				frozenId, taken.toMillis()));
		// Bound: the resumed instance finds its leases gone, beats again and is given its share back on the
		// others' next renewals.
		await("the resumed " + frozenId + " owns segments again").atMost(Duration.ofSeconds(30L * this.slack))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> owners().values().stream().anyMatch(frozenId::equals));
		log.append(String.format("  %5.1f s: %s owns segments again%n", seconds(begin), frozenId));
		return taken;
	}

	private static void signal(Process process, String signal) throws Exception {
		Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).inheritIO().start();
		if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
			throw new IllegalStateException("kill -" + signal + " " + process.pid() + " failed");
		}
	}

	private static double seconds(long since) {
		return (System.nanoTime() - since) / 1e9;
	}

	/**
	 * Starts an instance. On a cluster, an instance whose start-up failed (it exits: a node went down during its
	 * schema check, finding 24 (H) in docs/reliability.md) is started again, as an orchestrator would, at most
	 * twice; each such start is counted.
	 */
	private void start(String name) throws Exception {
		for (int attempt = 1;; attempt++) {
			try {
				startOnce(name);
				return;
			}
			catch (InstanceExited ex) {
				if (this.nodeStops == null || attempt == 3) {
					throw ex;
				}
				this.startFailures.add(ex.getMessage().lines().findFirst().orElse(""));
				System.out.println("instance start-up failed, starting it again: " + ex.getMessage());
			}
		}
	}

	/** An instance JVM that exited before it started. */
	private static final class InstanceExited extends IllegalStateException {

		private static final long serialVersionUID = 1L;

		InstanceExited(String message) {
			super(message);
		}

	}

	private void startOnce(String name) throws Exception {
		String id = name + "-" + this.incarnations++;
		this.instanceIds.add(id);
		Path output = this.work.resolve(id + ".out");
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		String contactPoints = this.keyspace.contactPoints()
			.stream()
			.map((point) -> point.getHostString() + ":" + point.getPort())
			.collect(Collectors.joining(","));
		Process child = new ProcessBuilder(java, "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
				"-Dshared.slice-groups=" + SLICE_GROUPS, "-cp",
				System.getProperty("java.class.path"), SharedProjectionMain.class.getName(), contactPoints,
				this.keyspace.datacenter(), this.keyspace.name(), this.tag, id, this.work.resolve(id + ".saves").toString())
			.redirectErrorStream(true)
			.redirectOutput(output.toFile())
			.start();
		this.running.put(name, child);
		// Bound: a JVM start, a session and the engine's start-up on a loaded 2-core machine.
		await("instance " + id + " started").atMost(Duration.ofSeconds(90L * this.slack)).pollInterval(Duration.ofMillis(100)).until(() -> {
			if (!child.isAlive()) {
				throw new InstanceExited(id + " exited: " + Files.readString(output));
			}
			return Files.readString(output).contains("STARTED");
		});
	}

	private void pollLeases(AtomicBoolean polling) {
		while (polling.get()) {
			try {
				owners();
			}
			catch (RuntimeException ex) {
				// a read that failed: the next poll
			}
			LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
		}
	}

	/**
	 * @return each held segment's owner, from the lease rows (one read of all 16, at the journal's consistency, as
	 * the instances watch them: a row a lightweight transaction wrote is seen once it is committed); notes the owner
	 * of each epoch seen
	 */
	private Map<String, String> owners() {
		// Bound: on a cluster a read can fail while a node goes down; the driver turns to the others.
		return await("lease rows read").atMost(Duration.ofSeconds(30))
			.pollDelay(Duration.ZERO)
			.pollInterval(Duration.ofMillis(200))
			.ignoreExceptions()
			.until(this::readOwners, (owners) -> true);
	}

	private Map<String, String> readOwners() {
		Map<String, String> owners = new HashMap<>();
		List<String> segments = SliceRange.split(SEGMENTS).stream().map(SliceRange::key).toList();
		result(this.leases.watch(PROJECTION, segments)).forEach((segment, lease) -> {
			if (lease.owner() != null) {
				owners.put(segment, lease.owner());
				String before = this.ownerByEpoch.putIfAbsent(segment + "@" + lease.epoch(), lease.owner());
				if (before != null && !before.equals(lease.owner())) {
					this.violations.add("segment " + segment + " epoch " + lease.epoch() + " held by " + before
							+ " and by " + lease.owner());
				}
			}
		});
		return owners;
	}

	/** @return the id of the running incarnation of an instance */
	private String latest(String name) {
		String id = null;
		for (String candidate : this.instanceIds) {
			if (candidate.startsWith(name + "-")) {
				id = candidate;
			}
		}
		return id;
	}

	/** @return segments whose lease names the latest incarnation of an instance (not a killed one) */
	private long ownedByRunning() {
		Map<String, String> latest = new HashMap<>();
		for (String id : this.instanceIds) {
			latest.put(id.substring(0, id.indexOf('-')), id);
		}
		return owners().values().stream().filter(latest.values()::contains).count();
	}

	/** @return the read model's rows, or -1 if the count failed (a node going down): for the log only */
	private long viewRowsForLog() {
		try {
			return viewRows();
		}
		catch (RuntimeException ex) {
			return -1;
		}
	}

	private long viewRows() {
		return this.keyspace.session().execute(quorum("SELECT count(*) FROM multi_jvm_view")).one().getLong(0);
	}

	/** The read model is written at LOCAL_QUORUM (on one node, the node). */
	private static SimpleStatement quorum(String cql) {
		return SimpleStatement.newInstance(cql).setConsistencyLevel(DefaultConsistencyLevel.LOCAL_QUORUM);
	}

	/** @return per entity: highest sequence number present with every one below it, and the sum of amounts */
	private Map<String, List<Long>> readModel() {
		Map<String, List<Long>> model = new HashMap<>();
		Map<String, Long> rows = new HashMap<>();
		for (Row row : this.keyspace.session().execute(quorum("SELECT persistence_id, sequence_nr, amount FROM multi_jvm_view"))) {
			rows.merge(row.getString(0), 1L, Long::sum);
			List<Long> entry = model.computeIfAbsent(row.getString(0), (k) -> new ArrayList<>(List.of(0L, 0L)));
			entry.set(0, Math.max(entry.get(0), row.getLong(1)));
			entry.set(1, entry.get(1) + row.getLong(2));
		}
		// A hole (a missing sequence number) shows as a row count below the highest.
		model.forEach((pid, entry) -> {
			if (rows.get(pid) != entry.get(0).longValue()) {
				entry.set(0, -rows.get(pid));
			}
		});
		return model;
	}

	/**
	 * With the segment-aware index on: every tag row of the run has its sliced copy (a missing one is an event no
	 * segment reads); a difference is a violation.
	 * @return the sliced rows per group, for the summary
	 */
	private String slicedRows() {
		var session = this.keyspace.session();
		String ks = this.keyspace.name();
		CassandraJournalOptions options = options(ks);
		long whole = session.execute(SimpleStatement.newInstance("SELECT count(*) FROM " + ks + "."
				+ options.tagIndexTable() + " WHERE tag = ?", this.tag)).one().getLong(0);
		List<Long> perGroup = new ArrayList<>();
		for (int group = 0; group < SLICE_GROUPS; group++) {
			perGroup.add(session.execute(SimpleStatement.newInstance("SELECT count(*) FROM " + ks + "."
					+ options.tagIndexSlicedTable() + " WHERE tag = ? AND slice_group = ?", this.tag, group))
				.one()
				.getLong(0));
		}
		long sliced = perGroup.stream().mapToLong(Long::longValue).sum();
		if (sliced != whole) {
			this.violations.add("sliced tag rows: " + sliced + ", whole-tag rows: " + whole);
		}
		return SLICE_GROUPS + " (" + sliced + " sliced tag rows of " + whole + ", per group " + perGroup + ")";
	}

	private Report report(Appender appender, int kills, Duration stopped, StringBuilder log) throws IOException {
		List<Save> saves = new ArrayList<>();
		for (String id : this.instanceIds) {
			Path file = this.work.resolve(id + ".saves");
			if (Files.exists(file)) {
				for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
					Save.parse(line).ifPresent(saves::add);
				}
			}
		}
		this.violations.addAll(checkSaves(saves, this.ownerByEpoch));
		String sliced = (SLICE_GROUPS == 0) ? "off" : slicedRows();
		Map<String, Long> outcomes = new TreeMap<>(saves.stream().collect(Collectors.groupingBy(Save::outcome,
				Collectors.counting())));
		long ownerChanges = 0;
		for (SliceRange range : SliceRange.split(SEGMENTS)) {
			ownerChanges += result(this.leases.read(PROJECTION, range.key())).map((l) -> l.epoch() - 1).orElse(0L);
		}
		long deliveries = 0;
		long distinct = 0;
		for (Row row : this.keyspace.session().execute(quorum("SELECT n FROM multi_jvm_deliveries"))) {
			deliveries += row.getLong(0);
			distinct++;
		}
		Map<String, List<Long>> model = readModel();
		Fold fold = journalFold(appender);
		this.violations.addAll(fold.lost());
		boolean matches = model.equals(fold.model());
		StringBuilder text = new StringBuilder();
		text.append(String.format("multi-JVM shared projection: %d segments, 3 instances, lease timeout %d s, "
				+ "%d events appended over %d entities (%d appends failed); tag-slice-groups: %s; Cassandra: %s%n",
				SEGMENTS, LEASE_TIMEOUT.toSeconds(), appender.appended(), ENTITIES, appender.failed(), sliced,
				(this.nodeStops == null) ? "one node" : this.keyspace.contactPoints().size() + " nodes"));
		text.append(log);
		if (this.nodeStops != null) {
			this.nodeStops.log().forEach((line) -> text.append(line).append('\n'));
			text.append(this.nodeStops.summary()).append('\n');
		}
		text.append(String.format("kills: %d; SIGSTOPped instance's segments taken after %d ms; instances started: %s%n",
				kills, stopped.toMillis(), this.instanceIds));
		if (!this.startFailures.isEmpty()) {
			text.append(String.format("instance start-ups that failed and were started again: %d %s%n",
					this.startFailures.size(), this.startFailures));
		}
		text.append(String.format("cursor writes recorded: %s; (segment, epoch) pairs seen in lease rows: %d%n", outcomes,
				this.ownerByEpoch.size()));
		List<Long> millis = this.failovers.stream().map(Duration::toMillis).sorted().toList();
		text.append(String.format("failover after SIGKILL (kill to no lease naming the killed instance), ms: %s%n", millis));
		text.append(String.format("owner changes (lease takes after the first, all segments): %d, of which %d segments "
				+ "taken over from a killed or stopped owner%n", ownerChanges, this.takenFromDead));
		text.append(String.format("deliveries: %d for %d events: %d handled twice (bound: one batch of %d per takeover "
				+ "from a dead owner, %d)%n", deliveries, distinct, deliveries - distinct, PAGE_SIZE,
				PAGE_SIZE * Math.max(1, this.takenFromDead)));
		text.append(String.format("read model equals the fold of the journal: %s%n", matches));
		text.append(String.format("violations: %d%n", this.violations.size()));
		this.violations.stream().limit(20).forEach((v) -> text.append("  ").append(v).append('\n'));
		return new Report(appender.appended(), kills, stopped, outcomes, List.copyOf(this.violations), ownerChanges,
				this.takenFromDead, List.copyOf(this.failovers), deliveries, deliveries - distinct, matches,
				appender.failed(), (this.nodeStops == null) ? 0 : this.nodeStops.made(), text.toString());
	}

	/**
	 * Per cursor, the applied writes in revision order: one per revision, the epoch never goes down, the offset
	 * never goes back; every (cursor, epoch) written by one instance only, the one the lease rows showed holding
	 * that epoch whenever the poller saw it. Writes refused (fenced) are fine; writes with an unknown outcome are
	 * counted only.
	 * @param saves the recorded writes
	 * @param ownerByEpoch {@code <from>-<to>@<epoch>} to the owner the lease row showed
	 * @return each broken rule, described
	 */
	static List<String> checkSaves(List<Save> saves, Map<String, String> ownerByEpoch) {
		List<String> violations = new ArrayList<>();
		Map<String, List<Save>> byKey = saves.stream().filter(Save::applied).collect(Collectors.groupingBy(Save::key));
		if (byKey.size() < SEGMENTS) {
			violations.add("applied writes on " + byKey.size() + " cursors, expected " + SEGMENTS);
		}
		byKey.forEach((key, applied) -> {
			List<Save> ordered = applied.stream().sorted(Comparator.comparingLong(Save::revision)).toList();
			Map<Long, String> writerOfEpoch = new HashMap<>();
			for (int i = 0; i < ordered.size(); i++) {
				Save save = ordered.get(i);
				String writer = writerOfEpoch.putIfAbsent(save.epoch(), save.instance());
				if (writer != null && !writer.equals(save.instance())) {
					violations.add(key + ": epoch " + save.epoch() + " written by " + writer + " and " + save);
				}
				String segment = key.substring(key.indexOf("segment(") + "segment(".length(), key.indexOf("):"));
				String owner = ownerByEpoch.get(segment + "@" + save.epoch());
				if (owner != null && !owner.equals(save.instance())) {
					violations.add(key + ": " + save + " but the lease row gave epoch " + save.epoch() + " to " + owner);
				}
				if (i == 0) {
					continue;
				}
				Save before = ordered.get(i - 1);
				if (save.revision() == before.revision()) {
					violations.add(key + ": two writes applied at one revision: " + before + ", " + save);
				}
				if (save.epoch() < before.epoch()) {
					violations.add(key + ": epoch went down: " + before + " then " + save);
				}
				if (save.offset().compareTo(before.offset()) < 0) {
					violations.add(key + ": cursor moved back: " + before + " then " + save);
				}
			}
		});
		return violations;
	}

	/**
	 * The journal's events of the run's entities, replayed.
	 *
	 * @param model per entity as {@link #readModel()} gives it: the highest sequence number (minus the number of
	 * events when some number below it holds none: a failed append's gap) and the sum of the amounts
	 * @param lost acknowledged appends not found in the journal, described
	 */
	record Fold(Map<String, List<Long>> model, List<String> lost) {
	}

	/** @return the fold of the journal, each acknowledged append checked against it */
	private Fold journalFold(Appender appender) {
		Map<String, List<Long>> model = new HashMap<>();
		List<String> lost = new ArrayList<>();
		for (String id : appender.ids) {
			Map<Long, Long> events = new ConcurrentHashMap<>();
			result(this.journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class,
					(event) -> events.put(event.sequenceNr(), ((Deposited) event.payload()).amount())));
			if (!events.isEmpty()) {
				long highest = events.keySet().stream().mapToLong(Long::longValue).max().orElseThrow();
				long sum = events.values().stream().mapToLong(Long::longValue).sum();
				model.put(id, new ArrayList<>(List.of((events.size() == highest) ? highest : -events.size(), sum)));
			}
			appender.acknowledged(id).forEach((sequenceNr, amount) -> {
				if (!amount.equals(events.get(sequenceNr))) {
					lost.add("acknowledged append " + id + "#" + sequenceNr + " (" + amount + ") not in the journal: "
							+ events.get(sequenceNr));
				}
			});
		}
		return new Fold(model, lost);
	}

	/**
	 * Appends one event at a time, round robin over its entities, until stopped; keeps what was acknowledged. An
	 * append that fails (on a cluster, while a node goes down) may or may not be stored: the next one to that entity
	 * goes after the head the journal then reports, and the fold of the journal decides.
	 */
	private final class Appender {

		private final List<String> ids = new ArrayList<>();

		/** Per entity, the next append's expected sequence number (its head as this appender knows it). */
		private final Map<String, Long> heads = new HashMap<>();

		/** Per entity, each acknowledged sequence number's amount. */
		private final Map<String, Map<Long, Long>> acknowledged = new ConcurrentHashMap<>();

		private final AtomicBoolean running = new AtomicBoolean(true);

		private final AtomicLong appended = new AtomicLong();

		private final AtomicLong failed = new AtomicLong();

		Appender() {
			for (int i = 0; i < ENTITIES; i++) {
				this.ids.add(entity(SharedProjectionRun.this.tag, i));
			}
		}

		void run() {
			int next = 0;
			while (this.running.get()) {
				String id = this.ids.get(next++ % this.ids.size());
				long amount = 1 + (next % 7);
				long head = this.heads.getOrDefault(id, 0L);
				try {
					result(SharedProjectionRun.this.journal.append(id, head,
							List.of(EventToAppend.of(new Deposited(amount), SharedProjectionRun.this.tag))));
					this.heads.put(id, head + 1);
					this.acknowledged.computeIfAbsent(id, (pid) -> new ConcurrentHashMap<>()).put(head + 1, amount);
					this.appended.incrementAndGet();
				}
				catch (RuntimeException ex) {
					this.failed.incrementAndGet();
					System.out.println("append to " + id + " at " + head + " failed: " + ex);
					this.heads.put(id, headOf(id));
				}
				// Pacing of the load (about 50 appends a second), not a wait for a condition.
				LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
			}
		}

		private long headOf(String id) {
			// Bound: a Cassandra node going down and the driver turning to the others.
			return await("head of " + id).atMost(Duration.ofSeconds(60))
				.pollInterval(Duration.ofMillis(500))
				.ignoreExceptions()
				.until(() -> result(SharedProjectionRun.this.journal.highestSequenceNr(id)), (h) -> h != null);
		}

		void stop() {
			this.running.set(false);
		}

		long appended() {
			return this.appended.get();
		}

		long failed() {
			return this.failed.get();
		}

		Map<Long, Long> acknowledged(String id) {
			return this.acknowledged.getOrDefault(id, Map.of());
		}

	}

}
