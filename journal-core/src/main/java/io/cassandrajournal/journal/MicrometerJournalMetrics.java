package io.cassandrajournal.journal;

import java.time.Duration;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Journal meters:
 * <ul>
 * <li>{@code journal.appends} (timer): successful appends and their latency;</li>
 * <li>{@code journal.events.appended} (counter): events stored;</li>
 * <li>{@code journal.append.conflicts} (counter): appends that lost the race for their sequence range;</li>
 * <li>{@code journal.append.failures} (counter): appends that failed otherwise;</li>
 * <li>{@code journal.replays} (timer) and {@code journal.replay.events} (summary): replays and their size;</li>
 * <li>{@code journal.tag.copies.refused} (counter, tag {@code outcome}: {@code split} or {@code separate-copies}):
 * logged batches of tag row copies the node refused as too large ({@link #tagCopiesBatchRefused}).</li>
 * </ul>
 */
public final class MicrometerJournalMetrics implements JournalMetrics {

	private final Timer appends;

	private final Counter events;

	private final Counter conflicts;

	private final Counter failures;

	private final Timer replays;

	private final DistributionSummary replayEvents;

	private final Counter tagCopiesSplit;

	private final Counter tagCopiesSeparate;

	/** @param registry where the meters go */
	public MicrometerJournalMetrics(MeterRegistry registry) {
		this.appends = Timer.builder("journal.appends").description("Successful appends").publishPercentileHistogram()
			.register(registry);
		this.events = Counter.builder("journal.events.appended").description("Events stored by appends").register(registry);
		this.conflicts = Counter.builder("journal.append.conflicts")
			.description("Appends rejected because another writer moved the head")
			.register(registry);
		this.failures = Counter.builder("journal.append.failures")
			.description("Appends that failed for another reason than a conflict")
			.register(registry);
		this.replays = Timer.builder("journal.replays").description("Replays of one persistenceId").register(registry);
		this.replayEvents = DistributionSummary.builder("journal.replay.events")
			.description("Events delivered per replay")
			.register(registry);
		this.tagCopiesSplit = Counter.builder("journal.tag.copies.refused")
			.description("Logged batches of tag row copies refused as too large")
			.tag("outcome", "split")
			.register(registry);
		this.tagCopiesSeparate = Counter.builder("journal.tag.copies.refused")
			.description("Logged batches of tag row copies refused as too large")
			.tag("outcome", "separate-copies")
			.register(registry);
	}

	@Override
	public void appended(AppendResult result, Duration took) {
		this.appends.record(took);
		this.events.increment(result.eventCount());
	}

	@Override
	public void conflict(String persistenceId) {
		this.conflicts.increment();
	}

	@Override
	public void appendFailed(String persistenceId, Throwable error) {
		this.failures.increment();
	}

	@Override
	public void replayed(long events, Duration took) {
		this.replays.record(took);
		this.replayEvents.record(events);
	}

	@Override
	public void tagCopiesBatchRefused(int rows, boolean separateCopies) {
		(separateCopies ? this.tagCopiesSeparate : this.tagCopiesSplit).increment();
	}

}
