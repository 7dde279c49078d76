package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagOffset;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link Lag} on plain events with a fixed clock, a settable nano clock and a source that records where
 * it was asked to count from: no Cassandra, no threads.
 */
class LagTest {

	private final AtomicLong nanos = new AtomicLong(1);

	private final Lag lag = new Lag(new ProjectionMetrics(new SimpleMeterRegistry(), "view"),
			Clock.fixed(Instant.ofEpochSecond(100), ZoneOffset.UTC), this.nanos::get);

	private final CountingSource source = new CountingSource();

	private static PersistentEvent<String> event(String persistenceId, long sequenceNr, long epochSecond) {
		return new PersistentEvent<>(persistenceId, sequenceNr, Instant.ofEpochSecond(epochSecond), Set.of(), "\"x\"");
	}

	@Test
	void whileEventsComeTheLagIsTheAgeOfTheLastHandledEvent() {
		this.lag.batchEnded(List.of(event("a", 1, 90)), false, 1, Instant.ofEpochSecond(90), TagOffset.START, this.source);
		assertThat(this.lag.lag()).isEqualTo(Duration.ofSeconds(10));

		this.lag.batchEnded(List.of(), true, 0, Instant.ofEpochSecond(90), TagOffset.START, this.source);
		assertThat(this.lag.lag()).as("idle: caught up").isZero();
	}

	@Test
	void caughtUpMeansNoEventsWaiting() {
		this.source.count = 7;
		this.lag.batchEnded(List.of(event("a", 1, 90)), false, 1, null, TagOffset.START, this.source);
		assertThat(this.lag.lagEvents()).isEqualTo(7);

		this.lag.batchEnded(List.of(event("a", 2, 91)), true, 1, null, TagOffset.START, this.source);
		assertThat(this.lag.lagEvents()).isZero();
	}

	@Test
	void waitingEventsAreCountedFromTheHandledPrefixAtMostEveryTwoSeconds() {
		TagOffset stored = new TagOffset(50_000, "", 0);
		this.lag.batchEnded(List.of(event("a", 1, 90), event("a", 2, 91)), false, 1, null, stored, this.source);
		this.lag.batchEnded(List.of(event("a", 3, 92)), false, 1, null, stored, this.source);
		this.nanos.addAndGet(Duration.ofSeconds(2).toNanos());
		this.lag.batchEnded(List.of(event("a", 3, 92)), false, 1, null, stored, this.source);

		assertThat(this.source.from).containsExactly(new TagOffset(90_000, "a", 1), new TagOffset(92_000, "a", 3));
	}

	@Test
	void afterARestartTheStoredOffsetCountsAgain() {
		this.lag.batchEnded(List.of(event("a", 1, 90)), false, 1, null, TagOffset.START, this.source);
		this.lag.restarted();
		this.nanos.addAndGet(Duration.ofSeconds(2).toNanos());
		TagOffset stored = new TagOffset(80_000, "", 0);

		this.lag.batchEnded(List.of(event("a", 1, 70)), false, 0, null, stored, this.source);

		assertThat(this.source.from).last().isEqualTo(stored);
	}

	private static final class CountingSource implements ProjectionSource {

		final List<TagOffset> from = new ArrayList<>();

		long count;

		@Override
		public CompletionStage<Batch> poll() {
			throw new UnsupportedOperationException();
		}

		@Override
		public TagOffset offsetAfter(int handledInBatch) {
			throw new UnsupportedOperationException();
		}

		@Override
		public CompletionStage<Long> eventsAfter(TagOffset offset, int limit) {
			this.from.add(offset);
			return CompletableFuture.completedFuture(this.count);
		}

		@Override
		public boolean concerns(AppendResult result) {
			return false;
		}

	}

}
