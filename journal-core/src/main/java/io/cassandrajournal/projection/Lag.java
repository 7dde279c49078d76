package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagOffset;

/**
 * How far a projection trails its source: the age of the last handled event while events keep coming, and
 * how many events wait after the handled prefix (counted again at most every 2 s, off the poll's path; zero
 * when caught up). Where this fits: {@link ProjectionRunner} reports each batch's end to it; its figures go
 * to {@link ProjectionStatus} and the meters.
 */
final class Lag {

	private static final long COUNT_EVERY_NANOS = TimeUnit.SECONDS.toNanos(2);

	private final ProjectionMetrics metrics;

	private final Clock clock;

	private final LongSupplier nanoTime;

	private Duration lag = Duration.ZERO;

	private long lagEvents;

	/** The last event of the last batch's handled prefix; {@code null} after a (re)start from an offset. */
	private @Nullable TagOffset handledUpTo;

	private long countedAt;

	private boolean counting;

	Lag(ProjectionMetrics metrics, Clock clock) {
		this(metrics, clock, System::nanoTime);
	}

	Lag(ProjectionMetrics metrics, Clock clock, LongSupplier nanoTime) {
		this.metrics = metrics;
		this.clock = clock;
		this.nanoTime = nanoTime;
	}

	synchronized Duration lag() {
		return this.lag;
	}

	synchronized long lagEvents() {
		return this.lagEvents;
	}

	/** Reading starts again from a stored offset: what the last batch handled no longer counts. */
	synchronized void restarted() {
		this.handledUpTo = null;
	}

	/**
	 * A batch ended without a failure.
	 * @param events the batch's events
	 * @param caughtUp whether nothing more was readable when it was read
	 * @param handled the length of its handled prefix
	 * @param lastEventTimestamp the time stamp of the last event handled so far
	 * @param offset the stored offset
	 * @param source where the waiting events are counted; {@code null} while a start loads the offset
	 */
	void batchEnded(List<PersistentEvent<String>> events, boolean caughtUp, int handled,
			@Nullable Instant lastEventTimestamp, TagOffset offset, @Nullable ProjectionSource source) {
		TagOffset from;
		synchronized (this) {
			// While events keep coming, how old the last handled one was when handled; idle means caught up.
			this.lag = (!events.isEmpty() && lastEventTimestamp != null)
					? Duration.between(lastEventTimestamp, this.clock.instant()) : Duration.ZERO;
			this.metrics.lag(this.lag);
			if (handled > 0) {
				PersistentEvent<String> last = events.get(Math.min(handled, events.size()) - 1);
				this.handledUpTo = new TagOffset(last.timestamp().toEpochMilli(), last.persistenceId(), last.sequenceNr());
			}
			if (caughtUp && handled >= events.size()) {
				this.lagEvents = 0;
				this.metrics.lagEvents(0);
				return;
			}
			long now = this.nanoTime.getAsLong();
			if (source == null || this.counting || (this.countedAt != 0 && now - this.countedAt < COUNT_EVERY_NANOS)) {
				return;
			}
			this.counting = true;
			this.countedAt = now;
			// From the last event of the handled prefix: the stored offset of a tag feed trails it by the
			// backtrack window and would count events already handled.
			from = (this.handledUpTo != null && this.handledUpTo.compareTo(offset) > 0) ? this.handledUpTo : offset;
		}
		source.eventsAfter(from, ProjectionStatus.LAG_COUNT_LIMIT).whenComplete((count, error) -> {
			synchronized (this) {
				this.counting = false;
				if (count != null) {
					this.lagEvents = count;
					this.metrics.lagEvents(count);
				}
			}
		});
	}

}
