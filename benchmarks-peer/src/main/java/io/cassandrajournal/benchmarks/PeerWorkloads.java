package io.cassandrajournal.benchmarks;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.DoubleSupplier;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;

/**
 * The workloads the peer can do: appends without LWT of 1 and 10 events, the replay of one persistenceId, the
 * walk of one tag. Every side runs in every round with the same sizes and concurrency, the order rotating so no
 * side always meets a fresher (or busier) node; one unrecorded round of each side first (warm-up: JIT, prepared
 * statements, the peer's table creation).
 */
final class PeerWorkloads {

	private final Bench bench;

	private final PekkoPeer peer;

	private final AppendWorkloads appends;

	private final CassandraJournal noLwt;

	private final ReadWorkloads reads;

	private int run;

	PeerWorkloads(Bench bench, PekkoPeer peer) {
		this.bench = bench;
		this.peer = peer;
		this.appends = new AppendWorkloads(bench);
		CassandraJournalOptions unsafe = bench.options().withLightweightTransactions(false);
		this.noLwt = CassandraJournal.create(bench.session(), unsafe, bench.serializer());
		this.reads = new ReadWorkloads(bench);
	}

	/** @return appends per second of the peer, as {@link AppendWorkloads#ours} measures ours */
	double peerAppends(int count, int pids, int eventsPerAppend, int inFlight) {
		String prefix = "pekko-" + (this.run++) + "-";
		AtomicLongArray heads = new AtomicLongArray(pids);
		PerKeyOrder order = new PerKeyOrder(pids);
		long nanos = Bench.run(count, inFlight, (i) -> {
			int p = i % pids;
			long expected = heads.getAndAdd(p, eventsPerAppend);
			return order.after(p, () -> this.peer.append(prefix + p, expected, eventsPerAppend, Set.of()));
		});
		return count / (nanos / 1e9);
	}

	/**
	 * Appends without LWT, {@code eventsPerAppend} events each, 64 in flight over the run's persistenceIds: ours
	 * ({@code lightweightTransactions(false)}), the raw driver sending what ours sends (the head read on a
	 * persistenceId's first append, the events batch carrying the head), the peer (one atomic write), and the raw
	 * driver sending what the peer sends (the events batch alone, and the id row on a persistenceId's first
	 * append).
	 */
	PeerResult appendsWithoutLwt(String name, int eventsPerAppend, int count) {
		int pids = this.bench.sizes().persistenceIds();
		List<Double> ours = new ArrayList<>();
		List<Double> raw = new ArrayList<>();
		List<Double> peer = new ArrayList<>();
		List<Double> peerRaw = new ArrayList<>();
		int warmUp = Math.max(200, count / 10);
		this.appends.ours(this.noLwt, warmUp, pids, eventsPerAppend, 64);
		this.appends.raw(AppendWorkloads.RawWrite.WITH_HEAD, warmUp, pids, eventsPerAppend, 64);
		this.appends.raw(AppendWorkloads.RawWrite.BATCH_ONLY, warmUp, pids, eventsPerAppend, 64);
		peerAppends(warmUp, pids, eventsPerAppend, 64);
		// The benchmark's rule for rounds: more while a side spreads over 20% (Bench.rounds).
		this.bench.rounds((round) -> {
			for (int side = 0; side < 4; side++) {
				switch ((round + side) % 4) {
					case 0 -> ours.add(this.appends.ours(this.noLwt, count, pids, eventsPerAppend, 64));
					case 1 -> raw.add(this.appends.raw(AppendWorkloads.RawWrite.WITH_HEAD, count, pids, eventsPerAppend, 64));
					case 2 -> peer.add(peerAppends(count, pids, eventsPerAppend, 64));
					default -> peerRaw.add(this.appends.raw(AppendWorkloads.RawWrite.BATCH_ONLY, count, pids, eventsPerAppend, 64));
				}
			}
		}, ours, raw, peer, peerRaw);
		return new PeerResult(name, "ops/s", ours, raw, peer, peerRaw, count + " appends of " + eventsPerAppend
				+ " event(s), 64 in flight over " + pids + " persistenceIds, four sides rotating; ours without LWT "
				+ "writes the head in the events batch, the peer writes the events batch alone (no head, no claim); "
				+ "peer_raw is the raw driver sending what the peer sends");
	}

	/** The replay of one persistenceId of {@code replayEvents} events, each side its own copy. */
	PeerResult replay() {
		int events = this.bench.sizes().replayEvents();
		String pid = "peer-replay-" + System.nanoTime();
		seedOurs(pid, Set.of(), events);
		seedPeer(List.of(pid), Set.of(), events);
		CassandraJournalOptions options = this.reads.options();
		PreparedStatement select = this.bench.session().prepare(SimpleStatement.newInstance("SELECT sequence_nr, "
				+ "timestamp, payload, tags FROM " + options.requireKeyspace() + ".events WHERE persistence_id = ? AND "
				+ "partition_nr = ? AND sequence_nr >= ? AND sequence_nr <= ?").setPageSize(options.pageSize())
			.setConsistencyLevel(options.consistency()));
		RawJournal raw = new RawJournal(this.bench.session(), options);
		DoubleSupplier oursSide = () -> {
			AtomicLong count = new AtomicLong();
			long started = System.nanoTime();
			Bench.join(this.reads.journal().replay(pid, 1, Long.MAX_VALUE, AppendWorkloads.Deposited.class,
					(e) -> count.incrementAndGet()));
			return check(count.get(), events) / seconds(started);
		};
		DoubleSupplier rawSide = () -> {
			AtomicLong count = new AtomicLong();
			long started = System.nanoTime();
			long head = Bench.join(raw.head(pid));
			for (long p = 0; p <= (head - 1) / options.partitionSize(); p++) {
				Bench.join(forEach(this.bench.session().executeAsync(select.bind(pid, p, 1L, head)), count));
			}
			return check(count.get(), events) / seconds(started);
		};
		DoubleSupplier peerSide = () -> {
			long started = System.nanoTime();
			return check(Bench.join(this.peer.replay(pid)), events) / seconds(started);
		};
		return rounds("pekko-replay-100k", oursSide, rawSide, peerSide, events + " events of one persistenceId, "
				+ "page size " + options.pageSize() + " on every side (the peer's query.max-buffer-size too); ours "
				+ "journal.replay, raw the head read and paged SELECTs, the peer currentEventsByPersistenceId; ours and "
				+ "the peer deserialize each payload into the record with the same Jackson serializer");
	}

	/**
	 * The walk of one tag of {@code tagEvents} events over 20 persistenceIds: ours over the reference tag index
	 * (one partition), the peer over its {@code tag_views} (a partition per tag and hour: one or two here).
	 */
	PeerResult tagWalk() throws InterruptedException {
		int events = this.bench.sizes().tagEvents();
		String tag = "peer-walk-" + System.nanoTime();
		int pids = 20;
		List<String> ids = new ArrayList<>();
		for (int p = 0; p < pids; p++) {
			ids.add(tag + "-" + p);
			seedOurs(tag + "-" + p, Set.of(tag), events / pids);
		}
		seedPeer(ids, Set.of(tag), events / pids);
		Duration visible = this.peer.awaitTag(tag, (long) events / pids * pids, Duration.ofMinutes(3));
		CassandraJournalOptions options = this.reads.options();
		PreparedStatement select = ReadWorkloads.rawTagWalk(this.bench, options);
		long expected = (long) events / pids * pids;
		DoubleSupplier oursSide = () -> {
			AtomicLong count = new AtomicLong();
			long started = System.nanoTime();
			Bench.join(this.reads.query().forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START,
					AppendWorkloads.Deposited.class, (e) -> count.incrementAndGet()));
			return check(count.get(), expected) / seconds(started);
		};
		DoubleSupplier rawSide = () -> {
			AtomicLong count = new AtomicLong();
			long started = System.nanoTime();
			Bench.join(forEach(this.bench.session().executeAsync(ReadWorkloads.bindRawTagWalk(select, tag)), count));
			return check(count.get(), expected) / seconds(started);
		};
		DoubleSupplier peerSide = () -> {
			long started = System.nanoTime();
			return check(Bench.join(this.peer.walkTag(tag)), expected) / seconds(started);
		};
		return rounds("pekko-tag-walk", oursSide, rawSide, peerSide, expected + " events of one tag over " + pids
				+ " persistenceIds, page size " + options.pageSize() + "; ours forEachCurrentEventByTag over the "
				+ "reference tag index, raw a paged SELECT of its partition with ours' bounds, the peer currentEventsByTag from NoOffset "
				+ "over its tag_views (first-time-bucket the hour before the run); the peer's tag rows are written "
				+ "asynchronously after its events: the walks start once its query returned every event ("
				+ visible.toMillis() + " ms after the last append was acknowledged, at least its 5 s "
				+ "eventual-consistency-delay), so the wait for its tag writes is not timed; each of its walks does "
				+ "include the wait its current query makes before it completes (until one eventual-consistency-delay, "
				+ "5 s, has passed since it started)");
	}

	private PeerResult rounds(String name, DoubleSupplier ours, DoubleSupplier raw, DoubleSupplier peer, String note) {
		ours.getAsDouble();
		raw.getAsDouble();
		peer.getAsDouble();
		List<Double> o = new ArrayList<>();
		List<Double> r = new ArrayList<>();
		List<Double> p = new ArrayList<>();
		this.bench.rounds((round) -> {
			for (int side = 0; side < 3; side++) {
				switch ((round + side) % 3) {
					case 0 -> o.add(ours.getAsDouble());
					case 1 -> r.add(raw.getAsDouble());
					default -> p.add(peer.getAsDouble());
				}
			}
		}, o, r, p);
		return new PeerResult(name, "events/s", o, r, p, List.of(), note);
	}

	private void seedOurs(String pid, Set<String> tags, int events) {
		long head = 0;
		while (head < events) {
			int n = (int) Math.min(500, events - head);
			List<EventToAppend> batch = new ArrayList<>(n);
			for (int i = 0; i < n; i++) {
				batch.add(new EventToAppend(new AppendWorkloads.Deposited(25), tags));
			}
			head = Bench.join(this.reads.journal().append(pid, head, batch)).lastSequenceNr();
		}
	}

	/**
	 * Atomic writes of 100 events (the plugin's max-message-batch-size), the persistenceIds concurrently, each
	 * recovered first as a persistent actor would be (the plugin writes tag rows only for recovered ones).
	 */
	private void seedPeer(List<String> pids, Set<String> tags, int eventsEach) {
		List<CompletableFuture<?>> all = new ArrayList<>();
		for (String pid : pids) {
			CompletionStage<?> chain = this.peer.recover(pid);
			for (long head = 0; head < eventsEach; head += 100) {
				long from = head;
				int n = (int) Math.min(100, eventsEach - head);
				chain = chain.thenCompose((ignored) -> this.peer.append(pid, from, n, tags));
			}
			all.add(chain.toCompletableFuture());
		}
		Bench.join(Bench.allOf(all));
	}

	private static double seconds(long startedNanos) {
		return (System.nanoTime() - startedNanos) / 1e9;
	}

	private static long check(long count, long expected) {
		if (count != expected) {
			throw new IllegalStateException("read " + count + " events, expected " + expected);
		}
		return count;
	}

	/** As the raw side of {@link ReadWorkloads}: reads the same columns of every row, page after page. */
	private static CompletionStage<Void> forEach(CompletionStage<AsyncResultSet> page, AtomicLong count) {
		return page.thenCompose((rs) -> {
			for (Row row : rs.currentPage()) {
				row.getString("payload");
				row.getSet("tags", String.class);
				count.incrementAndGet();
			}
			return rs.hasMorePages() ? forEach(rs.fetchNextPage(), count) : CompletableFuture.completedFuture(null);
		});
	}

}
