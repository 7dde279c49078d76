package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagOffset;

/**
 * The read-only {@link SegmentStatus} view of a segmented projection. Where this fits: {@link SegmentedProjection}
 * holds one; {@link ProjectionEngine#segments} and {@link ProjectionEngine#readSegments} ask it. It only reads:
 * lease rows through {@link LeaseTable#watch} and cursors through {@link DurableStateOffsetStore#peek}, so nothing
 * the segments' owners track is changed. How long a segment has been without an owner is counted from this
 * instance's successive reads of its lease row, on the engine's monotonic clock (no clocks are compared).
 */
final class SegmentStatuses {

	/** A lease row as a read last saw it change, and when. */
	private record Seen(@Nullable String owner, long epoch, long beat, long sinceNanos) {

		boolean same(@Nullable Lease row) {
			if (row == null || row.owner() == null) {
				return this.owner == null;
			}
			return row.owner().equals(this.owner) && row.epoch() == this.epoch && row.beat() == this.beat;
		}

	}

	private final String projection;

	private final List<SegmentedProjection.Segment> segments;

	private final SegmentOwnership.@Nullable Context sharing;

	private final Map<String, Seen> seen = new ConcurrentHashMap<>();

	SegmentStatuses(String projection, List<SegmentedProjection.Segment> segments,
			SegmentOwnership.@Nullable Context sharing) {
		this.projection = projection;
		this.segments = segments;
		this.sharing = sharing;
	}

	/** @return every segment as this instance holds it (no query) */
	List<SegmentStatus> local() {
		return this.segments.stream().map(this::local).toList();
	}

	private SegmentStatus local(SegmentedProjection.Segment segment) {
		ProjectionRunner<?> runner = segment.runner;
		LeaseTerm term = segment.term;
		ProjectionStatus status = (runner != null) ? runner.status() : null;
		boolean held = (this.sharing == null) || (term != null && !term.lost());
		boolean runsHere = held && status != null && status.state() != ProjectionState.STOPPED;
		String owner = (this.sharing != null && term != null && held) ? this.sharing.settings().instanceId() : null;
		return new SegmentStatus(segment.range.key(), owner, (term != null) ? term.epoch() : 0, runsHere,
				(status != null) ? status.offset() : null, status, null);
	}

	/** @return every segment, with the lease rows and stored cursors of those this instance does not run */
	CompletionStage<List<SegmentStatus>> read() {
		SegmentOwnership.Context context = this.sharing;
		if (context == null) {
			return CompletableFuture.completedFuture(local());
		}
		CompletableFuture<Map<String, Lease>> rows = context.leases()
			.watch(this.projection, this.segments.stream().map((s) -> s.range.key()).toList())
			.toCompletableFuture();
		List<CompletableFuture<Optional<TagOffset>>> cursors = this.segments.stream()
			.map((s) -> context.offsets().peek(s.id).toCompletableFuture())
			.toList();
		List<CompletableFuture<?>> all = new ArrayList<>(cursors);
		all.add(rows);
		return CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).thenApply((ignored) -> {
			long now = context.nanoClock().getAsLong();
			List<SegmentStatus> result = new ArrayList<>(this.segments.size());
			for (int i = 0; i < this.segments.size(); i++) {
				SegmentStatus here = local(this.segments.get(i));
				Lease row = rows.join().get(here.range());
				TagOffset cursor = (here.status() != null) ? here.cursor() : cursors.get(i).join().orElse(null);
				if (here.runsHere()) {
					this.seen.remove(here.range());
					result.add(new SegmentStatus(here.range(), here.owner(), here.epoch(), true, cursor, here.status(),
							null));
				}
				else {
					result.add(new SegmentStatus(here.range(), (row != null) ? row.owner() : null,
							(row != null) ? row.epoch() : 0, false, cursor, here.status(),
							ownerlessFor(here.range(), row, now, context.settings().leaseTimeout())));
				}
			}
			return result;
		});
	}

	/**
	 * @return how long the segment has been without an owner: since its row was first seen absent or released,
	 * or, with an owner, the part of its heartbeat's silence beyond the lease timeout; {@code null} if owned
	 */
	private @Nullable Duration ownerlessFor(String key, @Nullable Lease row, long now, Duration timeout) {
		Seen before = this.seen.get(key);
		Seen current = (before != null && before.same(row)) ? before
				: new Seen((row != null) ? row.owner() : null, (row != null) ? row.epoch() : 0,
						(row != null) ? row.beat() : 0, now);
		this.seen.put(key, current);
		Duration unchanged = Duration.ofNanos(now - current.sinceNanos());
		if (current.owner() == null) {
			return unchanged;
		}
		return (unchanged.compareTo(timeout) > 0) ? unchanged.minus(timeout) : null;
	}

}
