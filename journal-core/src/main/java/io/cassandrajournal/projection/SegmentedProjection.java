package io.cassandrajournal.projection;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.query.TagOffset;

/**
 * A projection split into segments ({@link ProjectionSettings#segments()}), each with its own cursor and
 * runner. Without sharing, this instance runs every segment. With sharing, {@link SegmentOwnership} decides
 * which segments this instance runs and starts and stops their runners as leases come and go. The control
 * calls act on the segments this instance runs. Where this fits: {@link ProjectionEngine#register} makes one for
 * a projection with more than one segment or with sharing on.
 *
 * @param <E> the payload type
 */
final class SegmentedProjection<E> extends AbstractSegmentedControl {

	/** Makes the runner of one segment (for one lease term, when shared). */
	@FunctionalInterface
	interface Runners<E> {

		ProjectionRunner<E> create(Segment segment, BooleanSupplier mayGoOn, OffsetStore offsets);

	}

	/**
	 * One segment: its slices and cursor, and, while this instance runs it, its runner (and lease term). A shared
	 * fan-out's segment has no cursor of its own (its {@code id} names the segment only): its runner is a
	 * {@link FanOutSegment}, whose entities' runners keep their own cursors.
	 */
	static final class Segment {

		final SliceRange range;

		final ProjectionId id;

		volatile @Nullable SegmentRunner runner;

		volatile @Nullable LeaseTerm term;

		Segment(SliceRange range, ProjectionId id) {
			this.range = range;
			this.id = id;
		}

	}

	private final Projection<E> projection;

	private final Runners<E> runners;

	private final OffsetStore offsets;

	private final @Nullable SegmentLayouts layouts;

	/**
	 * @param projection the projection
	 * @param runners makes the runner of one segment
	 * @param offsets the cursors
	 * @param sharing with sharing, its context; {@code null} without
	 * @param counts counts the events after a cursor in the projection's whole source (the lag of the segments run
	 * elsewhere, {@link ProjectionEngine#readSegments})
	 */
	SegmentedProjection(Projection<E> projection, Runners<E> runners, OffsetStore offsets,
			SegmentOwnership.@Nullable Context sharing, BiFunction<TagOffset, Integer, CompletionStage<Long>> counts) {
		super(projection.id(), projection.name(), split(projection.settings().segments(), (range) ->
				(projection.settings().segments() == 1) ? projection.id() : projection.id().segment(range)), sharing, true,
				counts);
		this.projection = projection;
		this.runners = runners;
		this.offsets = offsets;
		// A by-tag projection's segments start from the cursors of another number of segments when they have none
		// (the count was changed); a by-persistenceId projection has one segment.
		this.layouts = (projection.persistenceId() == null)
				? new SegmentLayouts(projection.id(), projection.settings().segments()) : null;
	}

	/** Starts a runner for a segment this instance now runs (under its lease term, when shared). */
	@Override
	SegmentRunner take(Segment segment, BooleanSupplier mayGoOn, OffsetStore cursor) {
		// With sharing the cursor is fenced; its reset must still forget the other layouts' cursors.
		OffsetStore resetting = (this.layouts != null && ownership() != null)
				? this.layouts.resettingEveryLayout(segment.range, cursor, this.offsets) : cursor;
		ProjectionRunner<E> runner = this.runners.create(segment, mayGoOn, resetting);
		publish(segment, runner, runner::start);
		return runner;
	}

	/**
	 * With sharing: where a segment whose cursor is absent starts (read without touching what the offset store
	 * tracks for its saves).
	 */
	@Override
	CompletionStage<TagOffset> inherited(Segment segment, DurableStateOffsetStore offsets) {
		return (this.layouts != null) ? this.layouts.inherited(segment.range, offsets::peek)
				: CompletableFuture.completedFuture(TagOffset.START);
	}

	@Override
	public synchronized CompletionStage<Void> start() {
		started(true);
		SegmentOwnership shared = ownership();
		if (shared != null) {
			return shared.start();
		}
		for (Segment segment : segments()) {
			if (segment.runner == null) {
				take(segment, () -> true,
						(this.layouts != null) ? this.layouts.inheriting(segment.range, this.offsets) : this.offsets);
			}
		}
		return all(ProjectionControl::start);
	}

	@Override
	public synchronized CompletionStage<Void> stop() {
		started(false);
		SegmentOwnership shared = ownership();
		if (shared != null) {
			return shared.stop();
		}
		return all(ProjectionControl::stop);
	}

	@Override
	public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
		List<SegmentRunner> running = running();
		return running.isEmpty() ? CompletableFuture.completedFuture(List.of()) : running.get(0).deadLetters(limit);
	}

	@Override
	public void wake(AppendResult result) {
		for (Segment segment : segments()) {
			SegmentRunner runner = segment.runner;
			// The runner's source decides whether the append concerns it (a segment's SliceFilter keeps its slices).
			if (runner != null) {
				runner.wake(result);
			}
		}
	}

	/**
	 * @param id the projection's identity
	 * @param started whether it is started on this instance
	 * @param each the statuses of the runners this instance runs
	 * @return one status over them: the worst state, the lowest cursor, the sums of events handled and skipped, the
	 * highest lag, the first deleted range one reports; RUNNING while started when this instance runs none
	 */
	static ProjectionStatus combined(ProjectionId id, boolean started, List<ProjectionStatus> each) {
		if (each.isEmpty()) {
			return new ProjectionStatus(id, started ? ProjectionState.RUNNING : ProjectionState.STOPPED,
					TagOffset.START, 0, 0, null, Duration.ZERO, 0, null);
		}
		ProjectionState state = each.stream().map(ProjectionStatus::state).max(Comparator.comparingInt(
				SegmentedProjection::severity)).orElseThrow();
		TagOffset lowest = each.stream().map(ProjectionStatus::offset).min(Comparator.naturalOrder()).orElseThrow();
		Instant last = each.stream().map(ProjectionStatus::lastEventTimestamp).filter(Objects::nonNull)
			.max(Comparator.naturalOrder()).orElse(null);
		return new ProjectionStatus(id, state, lowest, each.stream().mapToLong(ProjectionStatus::eventsHandled).sum(),
				each.stream().mapToLong(ProjectionStatus::eventsSkipped).sum(), last,
				each.stream().map(ProjectionStatus::lag).max(Comparator.naturalOrder()).orElse(Duration.ZERO),
				each.stream().mapToLong(ProjectionStatus::lagEvents).max().orElse(0),
				each.stream().map(ProjectionStatus::lastError).filter(Objects::nonNull).findFirst().orElse(null),
				each.stream().map(ProjectionStatus::lastHandled).filter(Objects::nonNull)
					.max(Comparator.comparing(ProjectionStatus.HandledEvent::timestamp)).orElse(null),
				each.stream().map(ProjectionStatus::deleted).filter(Objects::nonNull).findFirst().orElse(null));
	}

	private static int severity(ProjectionState state) {
		return switch (state) {
			case FAILED -> 4;
			case FAILING -> 3;
			case PAUSED -> 2;
			case RUNNING -> 1;
			default -> 0;
		};
	}

	private CompletionStage<Void> all(Function<SegmentRunner, CompletionStage<Void>> action) {
		return CompletableFuture.allOf(running().stream().map((r) -> action.apply(r).toCompletableFuture())
			.toArray(CompletableFuture[]::new));
	}

}
