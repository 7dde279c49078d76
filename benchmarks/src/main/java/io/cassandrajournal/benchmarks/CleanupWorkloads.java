package io.cassandrajournal.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;

import com.sun.tools.attach.VirtualMachine;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.launcher.CassandraNode;
import io.cassandrajournal.retention.JournalCleanup;
import io.cassandrajournal.retention.RetentionPolicy;
import io.cassandrajournal.retention.RetentionReport;
import io.cassandrajournal.retention.RetentionRunner;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.state.CassandraDurableStateStore;

/**
 * The cleanup benchmark of issue 18: how fast {@link RetentionRunner} deletes events ("keep 1 snapshot" over
 * entities with tagged events and a snapshot each), and how much disk that frees once Cassandra has compacted.
 * Each round writes a fresh keyspace ({@code entities x events}, one tag, the tag index on, a snapshot at 80% of
 * each entity's events), flushes and major-compacts it, measures the keyspace's data directory, runs the policy
 * (timed), flushes and compacts again and measures; then sets {@code gc_grace_seconds = 0} on its tables and
 * compacts once more, so the last figure shows what a cleanup frees once the tombstones may go (10 days later with
 * the default {@code gc_grace_seconds}).
 * <p>
 * Flush and compaction go through the node's own JMX beans ({@code StorageService}), reached with the JDK's attach
 * API on the node's process (the launcher starts it with attach allowed; there is no {@code nodetool} here). With
 * {@code --contact-points} (no node of ours) only the cleanup rate is measured.
 */
final class CleanupWorkloads {

	private static final String TAG = "cleanup";

	private final Bench bench;

	private final @Nullable CassandraNode node;

	CleanupWorkloads(Bench bench, @Nullable CassandraNode node) {
		this.bench = bench;
		this.node = node;
	}

	/** Entities and events per entity of a round: the 1,000 x 100, or 50 x 40 for a smoke run. */
	private int[] size() {
		boolean smoke = this.bench.sizes().replayEvents() < Bench.Sizes.full().replayEvents();
		return smoke ? new int[] { 50, 40 } : new int[] { 1_000, 100 };
	}

	List<Result> cleanup() throws Exception {
		int[] size = size();
		int entities = size[0];
		int perEntity = size[1];
		long snapshotAt = perEntity * 4L / 5;
		List<Double> rates = new ArrayList<>();
		List<Double> freedCompacted = new ArrayList<>();
		List<Double> freedNoGrace = new ArrayList<>();
		List<Double> before = new ArrayList<>();
		for (int round = 0; round < this.bench.sizes().rounds(); round++) {
			String keyspace = "bench_cleanup_" + System.currentTimeMillis();
			this.bench.session().execute("CREATE KEYSPACE " + keyspace
					+ " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
			var options = this.bench.options().withKeyspace(keyspace).withUseTagIndex(true);
			CassandraJournal journal = CassandraJournal.create(this.bench.session(), options, this.bench.serializer());
			CassandraSnapshotStore snapshots = CassandraSnapshotStore.create(this.bench.session(), options,
					this.bench.serializer());
			CassandraDurableStateStore positions = CassandraDurableStateStore.create(this.bench.session(), options,
					this.bench.serializer());
			write(journal, snapshots, entities, perEntity, snapshotAt);
			JournalCleanup cleanup = JournalCleanup.create(this.bench.session(), journal);
			RetentionRunner runner = RetentionRunner.create(cleanup, positions, Clock.systemUTC());
			RetentionPolicy policy = RetentionPolicy.NONE.withKeepSnapshots(1);

			Long sizeBefore;
			try {
				sizeBefore = compactedSize(keyspace);
			}
			catch (Exception ex) {
				// The rate still counts: say why there is no disk figure.
				System.out.println("cleanup: no disk figures, flush/compaction over JMX failed: " + ex);
				sizeBefore = null;
			}
			long started = System.nanoTime();
			RetentionReport report = Bench.join(runner.run("bench", policy, (progress) -> {
			}));
			double seconds = (System.nanoTime() - started) / 1e9;
			long expected = (long) entities * snapshotAt;
			if (report.events() != expected) {
				throw new IllegalStateException("the cleanup deleted " + report.events() + " events, not " + expected);
			}
			rates.add(report.events() / seconds);
			System.out.printf("cleanup round %d: %d events of %d entities deleted in %.2f s%n", round + 1,
					report.events(), entities, seconds);
			if (sizeBefore != null) {
				long afterCompaction = compactedSize(keyspace);
				noGcGrace(keyspace);
				long afterNoGrace = compactedSize(keyspace);
				before.add(sizeBefore / 1e6);
				freedCompacted.add((sizeBefore - afterCompaction) / 1e6);
				freedNoGrace.add((sizeBefore - afterNoGrace) / 1e6);
				System.out.printf("cleanup round %d: data %.2f MB before, %.2f MB after a major compaction, %.2f MB "
						+ "after one with gc_grace_seconds = 0%n", round + 1, sizeBefore / 1e6, afterCompaction / 1e6,
						afterNoGrace / 1e6);
			}
			this.bench.session().execute("DROP KEYSPACE " + keyspace);
		}
		String shape = String.format("%,d entities x %,d tagged events, snapshot at %d, keep 1 snapshot: %,d events "
				+ "deleted per round (events and tag-index rows, the reference tag layout), parallelism %d",
				entities, perEntity, snapshotAt, (long) entities * snapshotAt, RetentionPolicy.NONE.parallelism());
		List<Result> results = new ArrayList<>();
		results.add(ours("cleanup", "events/s", rates, shape));
		if (!before.isEmpty()) {
			String disk = String.format("keyspace data directory: %.1f MB before (flushed, major-compacted); ",
					Stats.median(before));
			results.add(ours("cleanup-disk-freed", "MB", freedCompacted, disk
					+ "freed after flush + major compaction with the default gc_grace_seconds (tombstones kept)"));
			results.add(ours("cleanup-disk-freed-no-grace", "MB", freedNoGrace, disk
					+ "freed after a major compaction with gc_grace_seconds = 0 (what the default frees after 10 days)"));
		}
		return results;
	}

	/** A figure with no raw-driver counterpart: the median of the rounds. */
	private static Result ours(String name, String unit, List<Double> rounds, String note) {
		return new Result(name, unit, Stats.median(rounds), null, null, null, null, null, note, List.copyOf(rounds),
				List.of());
	}

	private void write(CassandraJournal journal, CassandraSnapshotStore snapshots, int entities, int perEntity,
			long snapshotAt) {
		// 10 events (and their tag rows) per append: under the node's batch-size warning.
		int chunk = 10;
		int chunks = perEntity / chunk;
		List<EventToAppend> events = new ArrayList<>(chunk);
		for (int i = 0; i < chunk; i++) {
			events.add(EventToAppend.of(Map.of("kind", "deposited", "amount", 25), TAG));
		}
		// Entity by entity, each one's chunks in order; 32 entities in flight.
		Bench.run(entities, 32, (e) -> {
			String id = "cleanup-" + e;
			var stage = journal.append(id, 0, events);
			for (int c = 1; c < chunks; c++) {
				long expected = (long) c * chunk;
				stage = stage.thenCompose((ignored) -> journal.append(id, expected, events));
			}
			return stage.thenCompose((ignored) -> snapshots.save(id, snapshotAt, Map.of("balance", snapshotAt)));
		});
	}

	/** @return the keyspace's data on disk after a flush and a major compaction, or null without a node of ours */
	private @Nullable Long compactedSize(String keyspace) throws Exception {
		if (this.node == null) {
			return null;
		}
		storageService("forceKeyspaceFlush", new Object[] { keyspace, new String[0] },
				new String[] { String.class.getName(), String[].class.getName() });
		storageService("forceKeyspaceCompaction", new Object[] { false, keyspace, new String[0] },
				new String[] { boolean.class.getName(), String.class.getName(), String[].class.getName() });
		return settledSize(this.node.directory().resolve("data").resolve(keyspace));
	}

	/**
	 * The node deletes the sstables a compaction replaced (and its transaction logs) just after the compaction
	 * returns: measures until no transaction log is left and two readings 500 ms apart agree (30 s at most).
	 */
	private static long settledSize(Path directory) throws InterruptedException {
		long deadline = System.nanoTime() + 30_000_000_000L;
		long previous = -1;
		while (true) {
			long size = directorySize(directory);
			if ((size == previous && !hasTransactionLogs(directory)) || System.nanoTime() > deadline) {
				return size;
			}
			previous = size;
			Thread.sleep(500);
		}
	}

	private static boolean hasTransactionLogs(Path directory) {
		try (Stream<Path> files = Files.walk(directory)) {
			return files.anyMatch((file) -> file.getFileName().toString().contains("_txn_"));
		}
		catch (IOException | UncheckedIOException ex) {
			// A file removed during the walk: the node is still cleaning up.
			return true;
		}
	}

	private void noGcGrace(String keyspace) {
		for (var table : this.bench.session().getMetadata().getKeyspace(keyspace).orElseThrow().getTables().keySet()) {
			this.bench.session().execute("ALTER TABLE " + keyspace + "." + table.asCql(true) + " WITH gc_grace_seconds = 0");
		}
	}

	/** Calls an operation of the node's {@code StorageService} bean over JMX (attach API, local agent). */
	private void storageService(String operation, Object[] arguments, String[] signature) throws Exception {
		CassandraNode ours = this.node;
		if (ours == null) {
			throw new IllegalStateException("no node of ours to reach over JMX");
		}
		VirtualMachine vm = VirtualMachine.attach(Long.toString(ours.pid()));
		try {
			String address = vm.startLocalManagementAgent();
			try (JMXConnector connector = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
				MBeanServerConnection beans = connector.getMBeanServerConnection();
				beans.invoke(new ObjectName("org.apache.cassandra.db:type=StorageService"), operation, arguments,
						signature);
			}
		}
		finally {
			vm.detach();
		}
	}

	/** Bytes of the files under a keyspace's data directory, without snapshots and backups. */
	private static long directorySize(Path directory) {
		if (!Files.isDirectory(directory)) {
			return 0;
		}
		long[] total = { 0 };
		try {
			Files.walkFileTree(directory, new SimpleFileVisitor<>() {
				@Override
				public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attributes) {
					String name = dir.getFileName().toString();
					return (name.equals("snapshots") || name.equals("backups")) ? FileVisitResult.SKIP_SUBTREE
							: FileVisitResult.CONTINUE;
				}

				@Override
				public FileVisitResult visitFile(Path file, BasicFileAttributes attributes) {
					total[0] += attributes.size();
					return FileVisitResult.CONTINUE;
				}

				@Override
				public FileVisitResult visitFileFailed(Path file, IOException ex) {
					// Removed by the node meanwhile (a replaced sstable, a transaction log).
					return FileVisitResult.CONTINUE;
				}
			});
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return total[0];
	}

}
