package io.cassandrajournal.spring.boot.metrics;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.projection.InMemoryOffsetStore;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionHandler;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.TagFilter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The per-segment gauges of a projection of 4 segments without sharing (this instance runs every segment), and
 * that they follow the segment's runner: 0 once stopped (within the snapshot's 500 ms). No Cassandra needed; waits
 * bounded by 10 s.
 */
class ProjectionSegmentMetricsTest {

	private final InMemoryJournal journal = new InMemoryJournal();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal)
		.readJournal(this.journal.readJournal())
		.offsetStore(new InMemoryOffsetStore())
		.build();

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void oneOwnedGaugePerSegmentTaggedWithItsRange() throws Exception {
		ProjectionControl control = this.engine.register(Projection.byTag("orders", TagFilter.tag("order"), String.class,
				ProjectionHandler.blocking((event) -> {
				}), ProjectionSettings.defaults().withSegments(4)));
		SimpleMeterRegistry registry = new SimpleMeterRegistry();
		new ProjectionSegmentMetrics(this.engine).bindTo(registry);
		List<Gauge> owned = List.copyOf(registry.find("persistence.projection.segment.owned").tag("projection", "orders")
			.gauges());
		assertThat(owned).extracting((g) -> g.getId().getTag("segment"))
			.containsExactlyInAnyOrder("0-255", "256-511", "512-767", "768-1023");
		assertThat(owned).allSatisfy((g) -> assertThat(g.value()).isZero());

		control.start().toCompletableFuture().get(10, TimeUnit.SECONDS);
		await().atMost(Duration.ofSeconds(10)).until(() -> owned.stream().allMatch((g) -> g.value() == 1.0));
		assertThat(registry.find("persistence.projection.segment.lag").tag("segment", "0-255").gauge()).isNotNull();
		assertThat(registry.find("persistence.projection.segment.lag.events").tag("segment", "0-255").gauge())
			.isNotNull();
		assertThat(registry.find("persistence.projection.segment.epoch").gauges()).hasSize(4)
			.allSatisfy((g) -> assertThat(g.value()).as("no lease without sharing").isZero());

		control.stop().toCompletableFuture().get(10, TimeUnit.SECONDS);
		// The gauges share a snapshot taken at most every 500 ms.
		await().atMost(Duration.ofSeconds(10)).until(() -> owned.stream().allMatch((g) -> g.value() == 0));
	}

}
