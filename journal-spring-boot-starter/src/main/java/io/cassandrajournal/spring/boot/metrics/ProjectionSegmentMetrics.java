package io.cassandrajournal.spring.boot.metrics;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;
import java.util.function.ToDoubleFunction;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.SegmentStatus;

/**
 * Gauges per segment of every projection registered with the engine when bound, tagged {@code projection} and
 * {@code segment} (the range, {@code <from>-<to>}), read from what this instance holds (no query):
 * <ul>
 * <li>{@code persistence.projection.segment.owned}: 1 while this instance runs the segment, else 0 (summed over
 * the instances, each segment counts once)</li>
 * <li>{@code persistence.projection.segment.epoch}: the epoch of the lease it runs under here, 0 when not here</li>
 * <li>{@code persistence.projection.segment.lag} (seconds): how old the last handled event was when handled,
 * while it runs here</li>
 * <li>{@code persistence.projection.segment.lag.events}: events after its cursor not yet handled, while it runs
 * here</li>
 * </ul>
 * The per-projection meters ({@code persistence.projection.*}) are the core's. The gauges of one projection share
 * one snapshot of its segments, taken at most every 500 ms (so a scrape costs O(segments), and a gauge may trail
 * the runner by up to 500 ms).
 */
public class ProjectionSegmentMetrics implements MeterBinder {

	/** How long one snapshot of a projection's segments serves its gauges (one scrape reads them all within it). */
	static final Duration SNAPSHOT_MAX_AGE = Duration.ofMillis(500);

	private final ProjectionEngine engine;

	private final LongSupplier nanoClock;

	/**
	 * @param engine the engine whose projections are measured (register them before binding)
	 */
	public ProjectionSegmentMetrics(ProjectionEngine engine) {
		this(engine, System::nanoTime);
	}

	ProjectionSegmentMetrics(ProjectionEngine engine, LongSupplier nanoClock) {
		this.engine = engine;
		this.nanoClock = nanoClock;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (ProjectionControl control : this.engine.projections()) {
			String projection = control.id().name();
			Snapshots snapshots = new Snapshots(projection);
			for (SegmentStatus segment : this.engine.segments(projection)) {
				String range = segment.range();
				gauge(registry, "persistence.projection.segment.owned", "Whether this instance runs the segment (1) or not (0)",
						null, snapshots, range, (s) -> s.runsHere() ? 1 : 0);
				gauge(registry, "persistence.projection.segment.epoch", "Epoch of the lease the segment runs under here",
						null, snapshots, range, (s) -> s.runsHere() ? s.epoch() : 0);
				gauge(registry, "persistence.projection.segment.lag",
						"How old the segment's last handled event was when handled, while it runs here", "seconds",
						snapshots, range, (s) -> (s.status() != null) ? s.status().lag().toMillis() / 1000.0 : 0);
				gauge(registry, "persistence.projection.segment.lag.events",
						"Events after the segment's cursor not yet handled, while it runs here", "events", snapshots,
						range, (s) -> (s.status() != null) ? s.status().lagEvents() : 0);
			}
		}
	}

	private void gauge(MeterRegistry registry, String name, String description, @Nullable String baseUnit,
			Snapshots snapshots, String range, ToDoubleFunction<SegmentStatus> value) {
		Gauge.builder(name, () -> {
			SegmentStatus segment = snapshots.current().get(range);
			return (segment != null) ? value.applyAsDouble(segment) : 0;
		}).description(description).baseUnit(baseUnit).tag("projection", snapshots.projection).tag("segment", range)
			.register(registry);
	}

	/**
	 * One projection's segments by range, read once ({@link ProjectionEngine#segments}, no query) and shared by all
	 * its gauges for {@link #SNAPSHOT_MAX_AGE}: a scrape of the 4 gauges of N segments costs one O(N) read per
	 * projection, not one per gauge (O(N) each, so O(N^2) in all).
	 */
	private final class Snapshots {

		private final String projection;

		private @Nullable Map<String, SegmentStatus> byRange;

		private long takenAt;

		Snapshots(String projection) {
			this.projection = projection;
		}

		synchronized Map<String, SegmentStatus> current() {
			long now = ProjectionSegmentMetrics.this.nanoClock.getAsLong();
			Map<String, SegmentStatus> last = this.byRange;
			if (last != null && now - this.takenAt < SNAPSHOT_MAX_AGE.toNanos()) {
				return last;
			}
			Map<String, SegmentStatus> fresh = new HashMap<>();
			for (SegmentStatus segment : ProjectionSegmentMetrics.this.engine.segments(this.projection)) {
				fresh.put(segment.range(), segment);
			}
			this.byRange = fresh;
			this.takenAt = now;
			return fresh;
		}

	}

}
