package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagOffset;

/**
 * The read-only {@link SegmentStatus} view of a segmented projection. Where this fits: {@link SegmentedProjection}
 * holds one; {@link ProjectionEngine#segments}, {@link ProjectionEngine#readSegmentOwners} and
 * {@link ProjectionEngine#readSegments} ask it. It only reads: lease rows through {@link LeaseTable#watch} (or the
 * rows this instance's lease loop read last, {@link #observe}) and cursors through
 * {@link DurableStateOffsetStore#peek}, so nothing the segments' owners track is changed.
 * <p>
 * <b>Ownerless for</b> (the one definition, {@link SegmentStatus#ownerlessFor()}): how long a segment has gone
 * without a live owner, counted from the last sign of one this instance saw: from the first read that found its
 * lease row absent or released, or, when the row names an owner, from the first read that saw the row's current
 * heartbeat. A row with an owner counts as ownerless only once that heartbeat has stayed unchanged for the lease
 * timeout (the owner's lease lapsed: from then on another instance may take it, {@link LeaseWatch}), and is then
 * reported with its whole silence, lease timeout included. So a crashed owner's segment is ownerless for about the
 * lease timeout when its lease lapses, and a health check that reports segments ownerless for longer than the
 * lease timeout reports it then, not a second lease timeout later. Durations are measured on the engine's
 * monotonic clock between this instance's own reads (no clocks are compared across machines); the first sight of
 * a heartbeat trails its write by at most the interval between reads, so more frequent reads (the lease loop's,
 * every renewal interval, while the projection is started here) count more exactly.
 */
final class SegmentStatuses {

	/** Stored cursors and lag counts read at once per projection, at most (a projection may have 1024 segments). */
	private static final int READS_IN_FLIGHT = 8;

	/** A lease row as a read last saw it change, and when. */
	private record Seen(@Nullable String owner, long epoch, long beat, long sinceNanos) {

		static Seen of(@Nullable Lease row, long now) {
			return (row == null || row.owner() == null) ? new Seen(null, 0, 0, now)
					: new Seen(row.owner(), row.epoch(), row.beat(), now);
		}

		boolean same(@Nullable Lease row) {
			if (row == null || row.owner() == null) {
				return this.owner == null;
			}
			return row.owner().equals(this.owner) && row.epoch() == this.epoch && row.beat() == this.beat;
		}

	}

	/** Lease rows by segment, and when the read that returned them completed. */
	private record Observed(Map<String, Lease> rows, long atNanos) {
	}

	private final String projection;

	private final List<SegmentedProjection.Segment> segments;

	private final SegmentOwnership.@Nullable Context sharing;

	/** Counts the events after a cursor (the projection's whole source); {@code null}: lag of others not counted. */
	private final @Nullable BiFunction<TagOffset, Integer, CompletionStage<Long>> counter;

	private final Map<String, Seen> seen = new ConcurrentHashMap<>();

	private volatile @Nullable Observed observed;

	SegmentStatuses(String projection, List<SegmentedProjection.Segment> segments,
			SegmentOwnership.@Nullable Context sharing,
			@Nullable BiFunction<TagOffset, Integer, CompletionStage<Long>> counter) {
		this.projection = projection;
		this.segments = segments;
		this.sharing = sharing;
		this.counter = counter;
	}

	/** @return every segment as this instance holds it (no query) */
	List<SegmentStatus> local() {
		return this.segments.stream().map(this::local).toList();
	}

	private SegmentStatus local(SegmentedProjection.Segment segment) {
		SegmentRunner runner = segment.runner;
		LeaseTerm term = segment.term;
		ProjectionStatus status = (runner != null) ? runner.status() : null;
		boolean held = (this.sharing == null) || (term != null && !term.lost());
		boolean runsHere = held && status != null && status.state() != ProjectionState.STOPPED;
		String owner = (this.sharing != null && term != null && held) ? this.sharing.settings().instanceId() : null;
		return new SegmentStatus(segment.range.key(), owner, (term != null) ? term.epoch() : 0, runsHere,
				(status != null) ? status.offset() : null, status, null);
	}

	/**
	 * Feeds the rows this instance's lease loop has just read (every renewal interval while the projection is
	 * started here), so the heartbeats' first sight is counted at that cadence and a status read soon after needs
	 * no query of its own.
	 * @param rows the lease rows read, by segment (absent: never taken)
	 * @param nowNanos the engine's monotonic clock, read after the read completed
	 */
	void observe(Map<String, Lease> rows, long nowNanos) {
		for (SegmentedProjection.Segment segment : this.segments) {
			see(segment.range.key(), rows.get(segment.range.key()), nowNanos);
		}
		this.observed = new Observed(Map.copyOf(rows), nowNanos);
	}

	private Seen see(String key, @Nullable Lease row, long now) {
		return this.seen.compute(key, (k, before) -> (before != null && before.same(row)) ? before : Seen.of(row, now));
	}

	/**
	 * @return every segment with its owner from the lease rows, without stored cursors or lag of the segments run
	 * elsewhere: no query when this instance's lease loop read the rows within the last two renewal intervals
	 * (while the projection is started here), else one
	 */
	CompletionStage<List<SegmentStatus>> readOwners() {
		SegmentOwnership.Context context = this.sharing;
		if (context == null) {
			return CompletableFuture.completedFuture(local());
		}
		return rows(context).thenApply((rows) -> statuses(context, rows));
	}

	/**
	 * @return every segment with its owner, and for the segments run elsewhere their stored cursor and the events
	 * after it (at most {@value #READS_IN_FLIGHT} reads in flight)
	 */
	CompletionStage<List<SegmentStatus>> read() {
		SegmentOwnership.Context context = this.sharing;
		if (context == null) {
			return CompletableFuture.completedFuture(local());
		}
		return rows(context).thenCompose((rows) -> {
			List<SegmentStatus> owners = statuses(context, rows);
			List<Integer> elsewhere = new ArrayList<>();
			for (int i = 0; i < owners.size(); i++) {
				if (owners.get(i).status() == null) {
					elsewhere.add(i);
				}
			}
			return BoundedReads.each(elsewhere, READS_IN_FLIGHT,
					(i) -> stored(context, this.segments.get(i), owners.get(i)))
				.thenApply((read) -> {
					List<SegmentStatus> result = new ArrayList<>(owners);
					for (int j = 0; j < elsewhere.size(); j++) {
						result.set(elsewhere.get(j), read.get(j));
					}
					return result;
				});
		});
	}

	/** A segment run elsewhere (or by nobody), with its stored cursor and the events after it. */
	private CompletionStage<SegmentStatus> stored(SegmentOwnership.Context context, SegmentedProjection.Segment segment,
			SegmentStatus owner) {
		return context.offsets().peek(segment.id).thenCompose((cursor) -> {
			BiFunction<TagOffset, Integer, CompletionStage<Long>> count = this.counter;
			CompletionStage<Optional<Long>> lag = (count != null)
					? count.apply(cursor.orElse(TagOffset.START), ProjectionStatus.LAG_COUNT_LIMIT).thenApply(Optional::of)
					: CompletableFuture.completedFuture(Optional.empty());
			return lag.thenApply((events) -> new SegmentStatus(owner.range(), owner.owner(), owner.epoch(), false,
					cursor.orElse(null), null, owner.ownerlessFor(), events.orElse(null)));
		});
	}

	private CompletionStage<Observed> rows(SegmentOwnership.Context context) {
		Observed last = this.observed;
		long now = context.nanoClock().getAsLong();
		if (last != null && now - last.atNanos() <= context.settings().renewInterval().multipliedBy(2).toNanos()) {
			return CompletableFuture.completedFuture(last);
		}
		return context.leases()
			.watch(this.projection, this.segments.stream().map((s) -> s.range.key()).toList())
			.thenApply((rows) -> {
				// Counted as seen (the ownerless durations), not kept as the lease loop's rows: without the loop
				// (the projection not started here), every read queries.
				long read = context.nanoClock().getAsLong();
				rows.forEach((key, row) -> see(key, row, read));
				return new Observed(rows, read);
			});
	}

	/**
	 * @param read the rows, and when they were read: whether an owner's lease lapsed is judged as of then (as a
	 * contender's {@link LeaseWatch} would have judged it), so rows up to two renewal intervals old never make a
	 * live owner's segment look ownerless; how long a segment has been ownerless is counted up to now
	 */
	private List<SegmentStatus> statuses(SegmentOwnership.Context context, Observed read) {
		Map<String, Lease> rows = read.rows();
		long now = context.nanoClock().getAsLong();
		List<SegmentStatus> result = new ArrayList<>(this.segments.size());
		for (SegmentedProjection.Segment segment : this.segments) {
			SegmentStatus here = local(segment);
			Lease row = rows.get(here.range());
			if (here.runsHere()) {
				result.add(here);
			}
			else {
				result.add(new SegmentStatus(here.range(), (row != null) ? row.owner() : null,
						(row != null) ? row.epoch() : 0, false, here.cursor(), here.status(),
						ownerlessFor(here.range(), row, read.atNanos(), now, context.settings().leaseTimeout())));
			}
		}
		return result;
	}

	/**
	 * @return how long the segment has gone without a live owner (see the class comment); {@code null} while its
	 * row names an owner whose heartbeat changed within the lease timeout
	 */
	private @Nullable Duration ownerlessFor(String key, @Nullable Lease row, long readAt, long now, Duration timeout) {
		Seen current = see(key, row, readAt);
		Duration silent = Duration.ofNanos(Math.max(0, now - current.sinceNanos()));
		if (current.owner() == null) {
			return silent;
		}
		boolean lapsed = readAt - current.sinceNanos() >= timeout.toNanos();
		return lapsed ? silent : null;
	}

}
