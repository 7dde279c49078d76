package io.cassandrajournal.spring.boot.autoconfigure;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;

import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.spring.boot.metrics.ProjectionSegmentMetrics;

/**
 * Meters per projection segment ({@link ProjectionSegmentMetrics}: {@code persistence.projection.segment.*}, tagged
 * {@code projection} and {@code segment}). They are bound when the context starts, after the
 * {@code @ProjectionHandler} projections were registered (Boot binds {@code MeterBinder} beans earlier, before the
 * projections exist) and before they start. An application's own {@link ProjectionSegmentMetrics} bean replaces it.
 */
@AutoConfiguration(after = JournalProjectionsAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ ProjectionEngine.class, MeterRegistry.class })
public final class JournalProjectionMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(ProjectionSegmentMetrics.class)
	SegmentMetersBinding projectionSegmentMetersBinding(ProjectionEngine engine, MeterRegistry registry) {
		return new SegmentMetersBinding(new ProjectionSegmentMetrics(engine), registry);
	}

	/** Binds the segment meters once, when the context starts. */
	static final class SegmentMetersBinding implements SmartLifecycle {

		private final ProjectionSegmentMetrics metrics;

		private final MeterRegistry registry;

		private volatile boolean running;

		private boolean bound;

		SegmentMetersBinding(ProjectionSegmentMetrics metrics, MeterRegistry registry) {
			this.metrics = metrics;
			this.registry = registry;
		}

		@Override
		public synchronized void start() {
			if (!this.bound) {
				this.metrics.bindTo(this.registry);
				this.bound = true;
			}
			this.running = true;
		}

		@Override
		public void stop() {
			this.running = false;
		}

		@Override
		public boolean isRunning() {
			return this.running;
		}

		@Override
		public int getPhase() {
			// Before the projections start (ProjectionLifecycle runs in the default phase).
			return SmartLifecycle.DEFAULT_PHASE - 1;
		}

	}

}
