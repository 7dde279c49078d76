package io.cassandrajournal.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.EventUpcaster;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.serialization.Upcasters;

/**
 * Read workloads: replaying one persistenceId and walking one tag, ours (deserializing every payload into a
 * record) against paged SELECTs of the same rows with the same page size (reading the same columns).
 */
final class ReadWorkloads {

	/** The other side of the price rows {@code replay-100k-upcast} and {@code -tree}, as the report names it. */
	static final String WITHOUT_UPCASTERS = "ours without upcasters";

	private final Bench bench;

	private final CassandraJournal journal;

	private final CassandraReadJournal query;

	private final CassandraJournalOptions options;

	private final RawJournal raw;

	ReadWorkloads(Bench bench) {
		this.bench = bench;
		this.options = bench.options().withUseTagIndex(true).withPartitionSize(50_000);
		this.journal = CassandraJournal.create(bench.session(), this.options, bench.serializer());
		this.query = CassandraReadJournal.create(this.journal, bench.session(), this.options, bench.serializer());
		this.raw = new RawJournal(bench.session(), this.options);
	}

	/** Writes {@code events} tagged events to one persistenceId, 500 per append. */
	private String seed(String pid, String tag, int events) {
		long head = 0;
		while (head < events) {
			int n = (int) Math.min(500, events - head);
			List<EventToAppend> batch = new ArrayList<>(n);
			for (int i = 0; i < n; i++) {
				batch.add(EventToAppend.of(new AppendWorkloads.Deposited(25), tag));
			}
			head = Bench.join(this.journal.append(pid, head, batch)).lastSequenceNr();
		}
		return pid;
	}

	Result replay() {
		int events = this.bench.sizes().replayEvents();
		String pid = seed("replay-" + System.nanoTime(), "replay-tag-" + System.nanoTime(), events);
		String ks = this.options.requireKeyspace();
		PreparedStatement select = this.bench.session().prepare(SimpleStatement.newInstance("SELECT sequence_nr, timestamp, "
				+ "payload, tags FROM " + ks + ".events WHERE persistence_id = ? AND partition_nr = ? AND sequence_nr >= ? "
				+ "AND sequence_nr <= ?").setPageSize(this.options.pageSize()).setConsistencyLevel(this.options.consistency()));
		List<Double> ours = new ArrayList<>();
		List<Double> raws = new ArrayList<>();
		this.bench.rounds((round) -> Bench.alternate(round, () -> {
			AtomicLong count = new AtomicLong();
			Phase phase = Phase.begin("replay-100k", "ours");
			long started = System.nanoTime();
			Bench.join(this.journal.replay(pid, 1, Long.MAX_VALUE, AppendWorkloads.Deposited.class, (e) -> count.incrementAndGet()));
			ours.add(check(count.get(), events) / ((System.nanoTime() - started) / 1e9));
			phase.end(count.get());
		}, () -> {
			AtomicLong rawCount = new AtomicLong();
			Phase phase = Phase.begin("replay-100k", "raw");
			long started = System.nanoTime();
			// As ours: the head first (it bounds the replay), then each partition up to it.
			long head = Bench.join(this.raw.head(pid));
			long partitions = (head - 1) / this.options.partitionSize();
			for (long p = 0; p <= partitions; p++) {
				Bench.join(forEach(this.bench.session().executeAsync(select.bind(pid, p, 1L, head)), rawCount));
			}
			raws.add(check(rawCount.get(), events) / ((System.nanoTime() - started) / 1e9));
			phase.end(rawCount.get());
		}), ours, raws);
		return Result.of("replay-100k", "events/s", ours, raws, events + " events of one persistenceId, page size "
				+ this.options.pageSize() + "; both read the head, then the partitions; ours also deserializes each "
				+ "payload into a record");
	}

	/**
	 * The cost of upcasting on replay: the same replay through journals whose serializers have one trivial upcaster
	 * for the stored kind, against one without upcasters (bound from the text), the three sides rotating which goes
	 * first. {@code replay-100k-upcast}: a declared step ({@code EventUpcaster.removing("deposited", 1, "note")}, a
	 * property the stored events do not have, so that every side binds the same shape) that runs on the token stream;
	 * {@code replay-100k-upcast-tree}: a general step, the identity function on the tree (every payload parsed into a
	 * tree, passed through it and bound from the tree; this workload's only step until 2026-12-02, engineer U). Both
	 * reported with the plain replay in the "raw" column: the ratio is upcasting/plain, and both are
	 * {@linkplain Result#price price rows} (their other side is {@link #WITHOUT_UPCASTERS}, not the raw driver).
	 */
	List<Result> replayUpcast() {
		int events = this.bench.sizes().replayEvents();
		String pid = seed("replay-up-" + System.nanoTime(), "replay-up-tag-" + System.nanoTime(), events);
		CassandraJournal declared = CassandraJournal.create(this.bench.session(), this.options, new JacksonEventSerializer(
				Upcasters.builder().add(EventUpcaster.removing("deposited", 1, "note")).build()));
		CassandraJournal onTree = CassandraJournal.create(this.bench.session(), this.options, new JacksonEventSerializer(
				Upcasters.builder().add(EventUpcaster.of("deposited", 1, (event) -> event)).build()));
		List<CassandraJournal> journals = List.of(declared, onTree, this.journal);
		List<String> sides = List.of("ours", "tree", "raw");
		List<List<Double>> rates = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
		this.bench.rounds((round) -> {
			for (int i = 0; i < 3; i++) {
				int side = (round + i) % 3;
				AtomicLong count = new AtomicLong();
				Phase phase = Phase.begin("replay-100k-upcast", sides.get(side));
				long started = System.nanoTime();
				Bench.join(journals.get(side).replay(pid, 1, Long.MAX_VALUE, AppendWorkloads.Deposited.class,
						(e) -> count.incrementAndGet()));
				rates.get(side).add(check(count.get(), events) / ((System.nanoTime() - started) / 1e9));
				phase.end(count.get());
			}
		}, rates.get(0), rates.get(1), rates.get(2));
		String note = events + " events of one persistenceId; the raw column is the same replay without upcasters "
				+ "(ratio = upcasting/plain; the goal is at least 0.9); the three sides rotate which goes first";
		return List.of(Result.of("replay-100k-upcast", "events/s", rates.get(0), rates.get(2), "ours with one declared "
				+ "step for the stored kind (EventUpcaster.removing, a property the events do not have: upcast on the "
				+ "token stream); " + note).price(WITHOUT_UPCASTERS),
				Result.of("replay-100k-upcast-tree", "events/s", rates.get(1), rates.get(2), "ours with one general step "
						+ "for the stored kind (the identity function on the JSON tree); " + note)
					.price(WITHOUT_UPCASTERS));
	}

	/**
	 * One tag's walk, three sides in the same rounds (the order rotating, as {@code append-nolwt-1}'s):
	 * ours ({@code forEachCurrentEventByTag}, each payload deserialized into a record, the next page requested
	 * before the current one is delivered), the raw paged SELECT reading the payload text and the tags (each page's
	 * rows, then the next page), and the same raw walk deserializing each payload into the same record with the
	 * benchmark's serializer (ours' mapper) and requesting the next page first, as ours. Added 2026-12-04, session
	 * 20 (engineer B): the plain raw side neither deserializes nor prefetches, so {@code tag-walk}'s ratio holds
	 * the cost of Jackson, and the gain of the prefetch, beside our overhead.
	 * @return {@code tag-walk} (ours against the plain raw walk, as before) and {@code tag-walk-deserialized}
	 * (ours against the raw walk that deserializes and prefetches as ours: our overhead alone)
	 */
	List<Result> tagWalk() {
		int events = this.bench.sizes().tagEvents();
		String tag = "walk-" + System.nanoTime();
		int pids = 20;
		for (int p = 0; p < pids; p++) {
			seed(tag + "-" + p, tag, events / pids);
		}
		PreparedStatement select = rawTagWalk(this.bench, this.options);
		JacksonEventSerializer serializer = this.bench.serializer();
		List<Double> ours = new ArrayList<>();
		List<Double> raws = new ArrayList<>();
		List<Double> deserializing = new ArrayList<>();
		this.bench.rounds((round) -> {
			for (int side = 0; side < 3; side++) {
				switch ((round + side) % 3) {
					case 0 -> {
						AtomicLong count = new AtomicLong();
						Phase phase = Phase.begin("tag-walk", "ours");
						long started = System.nanoTime();
						Bench.join(this.query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START,
								AppendWorkloads.Deposited.class, (e) -> count.incrementAndGet()));
						ours.add(check(count.get(), events) / ((System.nanoTime() - started) / 1e9));
						phase.end(count.get());
					}
					case 1 -> {
						AtomicLong rawCount = new AtomicLong();
						Phase phase = Phase.begin("tag-walk", "raw");
						long started = System.nanoTime();
						Bench.join(forEach(this.bench.session().executeAsync(bindRawTagWalk(select, tag)), rawCount));
						raws.add(check(rawCount.get(), events) / ((System.nanoTime() - started) / 1e9));
						phase.end(rawCount.get());
					}
					default -> {
						AtomicLong rawCount = new AtomicLong();
						Phase phase = Phase.begin("tag-walk", "raw-deserialized");
						long started = System.nanoTime();
						Bench.join(forEachDeserialized(this.bench.session().executeAsync(bindRawTagWalk(select, tag)),
								serializer, AppendWorkloads.Deposited.class, rawCount));
						deserializing.add(check(rawCount.get(), events) / ((System.nanoTime() - started) / 1e9));
						phase.end(rawCount.get());
					}
				}
			}
		}, ours, raws, deserializing);
		String walk = events + " events of one tag partition, page size " + this.options.pageSize() + "; both one "
				+ "paged SELECT with ours' bounds (after the start offset, up to the walk's start time)";
		return List.of(Result.of("tag-walk", "events/s", ours, raws, walk + "; ours also deserializes each payload"),
				Result.of("tag-walk-deserialized", "events/s", ours, deserializing, "the same rounds' ours against the "
						+ "raw walk deserializing each payload into the same record with the same serializer and "
						+ "requesting the next page before walking the current one, as ours: our overhead alone; " + walk));
	}

	/**
	 * The raw side of a tag walk: the SELECT ours sends for one tag partition (the reference tag index), with the
	 * same bounds (after an offset, stamped up to the walk's start), so that both sides ask the node for the same
	 * slice; without a {@code LIMIT}, the driver pages through it.
	 */
	static PreparedStatement rawTagWalk(Bench bench, CassandraJournalOptions options) {
		return bench.session().prepare(SimpleStatement.newInstance("SELECT timestamp, persistence_id, sequence_nr, "
				+ "payload, tags FROM " + options.requireKeyspace() + "." + options.tagIndexTable() + " WHERE tag = ? "
				+ "AND (timestamp, persistence_id, sequence_nr) > (?, ?, ?) AND (timestamp) <= (?)")
			.setPageSize(options.pageSize())
			.setConsistencyLevel(options.consistency()));
	}

	/** Binds {@link #rawTagWalk}: from the start of the tag, up to now (as ours reads its clock per walk). */
	static BoundStatement bindRawTagWalk(PreparedStatement select, String tag) {
		return select.bind(tag, TagOffset.START.timestamp(), TagOffset.START.persistenceId(),
				TagOffset.START.sequenceNr(), System.currentTimeMillis());
	}

	/**
	 * The same walk over a minute-bucketed index: events spread over one bucket per append (a clock that
	 * moves a minute per reading), ours walking the bucket list against raw paged SELECTs of each bucket
	 * the bucket table lists.
	 */
	Result tagWalkBucketed() {
		int events = this.bench.sizes().tagEvents();
		String tag = "bucketed-" + System.nanoTime();
		java.util.concurrent.atomic.AtomicLong minutes = new java.util.concurrent.atomic.AtomicLong();
		long base = System.currentTimeMillis() - java.time.Duration.ofDays(30).toMillis();
		java.time.Clock stepping = new java.time.Clock() {
			@Override
			public long millis() {
				return base + minutes.getAndIncrement() * 60_000L;
			}

			@Override
			public java.time.Instant instant() {
				return java.time.Instant.ofEpochMilli(millis());
			}

			@Override
			public java.time.ZoneId getZone() {
				return java.time.ZoneOffset.UTC;
			}

			@Override
			public java.time.Clock withZone(java.time.ZoneId zone) {
				return this;
			}
		};
		CassandraJournalOptions bucketed = this.options.withTagBucketing(io.cassandrajournal.TagBucketing.MINUTE)
			.withClock(stepping);
		CassandraJournal writer = CassandraJournal.create(this.bench.session(), bucketed, this.bench.serializer());
		CassandraReadJournal reader = CassandraReadJournal.create(writer, this.bench.session(), bucketed,
				this.bench.serializer());
		int pids = 20;
		for (int p = 0; p < pids; p++) {
			long head = 0;
			while (head < events / pids) {
				int n = (int) Math.min(500, events / pids - head);
				List<EventToAppend> batch = new ArrayList<>(n);
				for (int i = 0; i < n; i++) {
					batch.add(EventToAppend.of(new AppendWorkloads.Deposited(25), tag));
				}
				head = Bench.join(writer.append(tag + "-" + p, head, batch)).lastSequenceNr();
			}
		}
		String ks = this.options.requireKeyspace();
		PreparedStatement listBuckets = this.bench.session().prepare(SimpleStatement.newInstance("SELECT bucket FROM "
				+ ks + "." + bucketed.tagBucketsTable() + " WHERE tag = ?").setConsistencyLevel(this.options.consistency()));
		PreparedStatement select = this.bench.session().prepare(SimpleStatement.newInstance("SELECT timestamp, "
				+ "persistence_id, sequence_nr, payload, tags FROM " + ks + "." + bucketed.tagIndexDataTable()
				+ " WHERE tag = ? AND bucket = ?").setPageSize(this.options.pageSize())
			.setConsistencyLevel(this.options.consistency()));
		List<Double> ours = new ArrayList<>();
		List<Double> raws = new ArrayList<>();
		AtomicLong buckets = new AtomicLong();
		this.bench.rounds((round) -> Bench.alternate(round, () -> {
			AtomicLong count = new AtomicLong();
			Phase phase = Phase.begin("tag-walk-bucketed", "ours");
			long started = System.nanoTime();
			Bench.join(reader.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START,
					AppendWorkloads.Deposited.class, (e) -> count.incrementAndGet()));
			ours.add(check(count.get(), events) / ((System.nanoTime() - started) / 1e9));
			phase.end(count.get());
		}, () -> {
			AtomicLong rawCount = new AtomicLong();
			Phase phase = Phase.begin("tag-walk-bucketed", "raw");
			long started = System.nanoTime();
			List<Long> listed = new ArrayList<>();
			this.bench.session().execute(listBuckets.bind(tag)).forEach((row) -> listed.add(row.getLong(0)));
			for (long bucket : listed) {
				Bench.join(forEach(this.bench.session().executeAsync(select.bind(tag, bucket)), rawCount));
			}
			raws.add(check(rawCount.get(), events) / ((System.nanoTime() - started) / 1e9));
			phase.end(rawCount.get());
			buckets.set(listed.size());
		}), ours, raws);
		return Result.of("tag-walk-bucketed", "events/s", ours, raws, events + " events of one tag over " + buckets.get()
				+ " minute buckets, page size " + this.options.pageSize() + "; raw lists the buckets and pages through each");
	}

	private static long check(long count, long expected) {
		if (count != expected) {
			throw new IllegalStateException("read " + count + " events, expected " + expected);
		}
		return count;
	}

	private static CompletionStage<Void> forEach(CompletionStage<AsyncResultSet> page, AtomicLong count) {
		return page.thenCompose((rs) -> {
			for (Row row : rs.currentPage()) {
				row.getString("payload");
				row.getSet("tags", String.class);
				count.incrementAndGet();
			}
			return rs.hasMorePages() ? forEach(rs.fetchNextPage(), count)
					: java.util.concurrent.CompletableFuture.completedFuture(null);
		});
	}

	/**
	 * The raw side of {@code tag-walk-deserialized}: as {@link #forEach(CompletionStage, AtomicLong)}, each payload
	 * also deserialized into {@code type} with {@code serializer}, and the next page requested before the current
	 * page's rows are walked, as ours does (at most two pages in memory); counts the events deserialized.
	 */
	private static <E> CompletionStage<Void> forEachDeserialized(CompletionStage<AsyncResultSet> page,
			JacksonEventSerializer serializer, Class<E> type, AtomicLong count) {
		return page.thenCompose((rs) -> {
			CompletionStage<AsyncResultSet> next = rs.hasMorePages() ? rs.fetchNextPage() : null;
			for (Row row : rs.currentPage()) {
				List<E> payloads = serializer.deserializeEvent(row.getString("payload"), type);
				row.getSet("tags", String.class);
				count.addAndGet(payloads.size());
			}
			return (next != null) ? forEachDeserialized(next, serializer, type, count)
					: java.util.concurrent.CompletableFuture.completedFuture(null);
		});
	}

	CassandraJournal journal() {
		return this.journal;
	}

	CassandraReadJournal query() {
		return this.query;
	}

	CassandraJournalOptions options() {
		return this.options;
	}

	static Set<String> tags(String tag) {
		return Set.of(tag);
	}

}
