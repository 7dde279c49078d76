package io.cassandrajournal.spring.boot.metrics;

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
 * The per-projection meters ({@code persistence.projection.*}) are the core's.
 */
public class ProjectionSegmentMetrics implements MeterBinder {

	private final ProjectionEngine engine;

	/**
	 * @param engine the engine whose projections are measured (register them before binding)
	 */
	public ProjectionSegmentMetrics(ProjectionEngine engine) {
		this.engine = engine;
	}

	@Override
	public void bindTo(MeterRegistry registry) {
		for (ProjectionControl control : this.engine.projections()) {
			String projection = control.id().name();
			for (SegmentStatus segment : this.engine.segments(projection)) {
				String range = segment.range();
				gauge(registry, "persistence.projection.segment.owned", "Whether this instance runs the segment (1) or not (0)",
						null, projection, range, (s) -> s.runsHere() ? 1 : 0);
				gauge(registry, "persistence.projection.segment.epoch", "Epoch of the lease the segment runs under here",
						null, projection, range, (s) -> s.runsHere() ? s.epoch() : 0);
				gauge(registry, "persistence.projection.segment.lag",
						"How old the segment's last handled event was when handled, while it runs here", "seconds",
						projection, range, (s) -> (s.status() != null) ? s.status().lag().toMillis() / 1000.0 : 0);
				gauge(registry, "persistence.projection.segment.lag.events",
						"Events after the segment's cursor not yet handled, while it runs here", "events", projection,
						range, (s) -> (s.status() != null) ? s.status().lagEvents() : 0);
			}
		}
	}

	private void gauge(MeterRegistry registry, String name, String description, @Nullable String baseUnit, String projection,
			String range, ToDoubleFunction<SegmentStatus> value) {
		Gauge.builder(name, () -> read(projection, range, value))
			.description(description)
			.baseUnit(baseUnit)
			.tag("projection", projection)
			.tag("segment", range)
			.register(registry);
	}

	private double read(String projection, String range, ToDoubleFunction<SegmentStatus> value) {
		for (SegmentStatus segment : this.engine.segments(projection)) {
			if (segment.range().equals(range)) {
				return value.applyAsDouble(segment);
			}
		}
		return 0;
	}

}
