package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * The meters of one projection, tagged {@code projection=<name>}. Names follow the reference
 * implementation (in Prometheus: {@code persistence_projection_stalled}, {@code
 * persistence_projection_failures_total}, {@code persistence_projection_events_skipped_total}), plus events
 * handled, handler duration, lag and offset-save duration.
 */
final class ProjectionMetrics {

	private final Counter handled;

	private final Counter failures;

	private final Counter skipped;

	private final Timer handlerDuration;

	private final Timer offsetSaveDuration;

	private final AtomicInteger stalled = new AtomicInteger();

	private final AtomicLong lagMillis = new AtomicLong();

	private final AtomicLong lagEvents = new AtomicLong();

	public ProjectionMetrics(MeterRegistry registry, String projection) {
		this.handled = Counter.builder("persistence.projection.events.handled")
			.description("Events the projection's handler completed")
			.tag("projection", projection)
			.register(registry);
		this.failures = Counter.builder("persistence.projection.failures")
			.description("Failed handler attempts (each retry counts)")
			.tag("projection", projection)
			.register(registry);
		this.skipped = Counter.builder("persistence.projection.events.skipped")
			.description("Events skipped as dead letters")
			.tag("projection", projection)
			.register(registry);
		this.handlerDuration = Timer.builder("persistence.projection.handler.duration")
			.description("Time the handler took per successful event")
			.tag("projection", projection)
			.register(registry);
		this.offsetSaveDuration = Timer.builder("persistence.projection.offset.save.duration")
			.description("Time to store the projection's offset")
			.tag("projection", projection)
			.register(registry);
		Gauge.builder("persistence.projection.stalled", this.stalled, AtomicInteger::get)
			.description("1 while the projection is failing or stopped by a failure, else 0")
			.tag("projection", projection)
			.register(registry);
		Gauge.builder("persistence.projection.lag", this.lagMillis, (lag) -> lag.get() / 1000.0)
			.description("How far behind real time the last handled event is while more events wait")
			.baseUnit("seconds")
			.tag("projection", projection)
			.register(registry);
		Gauge.builder("persistence.projection.lag.events", this.lagEvents, AtomicLong::get)
			.description("Events after the cursor not yet handled (by tag: counted up to 1,000 index rows ahead)")
			.tag("projection", projection)
			.register(registry);
	}

	public void lagEvents(long events) {
		this.lagEvents.set(events);
	}

	public void handled(Duration took) {
		this.handled.increment();
		this.handlerDuration.record(took);
	}

	public void failure() {
		this.failures.increment();
	}

	public void skipped() {
		this.skipped.increment();
	}

	public void offsetSaved(Duration took) {
		this.offsetSaveDuration.record(took);
	}

	public void stalled(boolean stalled) {
		this.stalled.set(stalled ? 1 : 0);
	}

	public void lag(Duration lag) {
		this.lagMillis.set(lag.toMillis());
	}

}
