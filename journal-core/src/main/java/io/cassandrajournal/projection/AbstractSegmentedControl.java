package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagOffset;

/**
 * What a control over segments does the same way whatever runs its segments: the status over the segments this
 * instance runs, pause and resume (a segment taken while paused starts paused), a reset of each segment run here
 * (with sharing, one whose reset failed is released), skipping, redelivery and the status views. Where this fits:
 * {@link SegmentedProjection} (a projection's segments, each a {@link ProjectionRunner}) and {@link SharedFanOut}
 * (a fan-out's segments, each a {@link FanOutSegment}) extend it, so that a fix to one reaches both.
 */
abstract class AbstractSegmentedControl implements SegmentedControl {

	private final ProjectionId id;

	private final List<SegmentedProjection.Segment> segments;

	private final @Nullable SegmentOwnership ownership;

	private final SegmentStatuses statuses;

	/** Guarded by {@link #pausing}. */
	private boolean paused;

	/**
	 * Held while the pause flag is set and applied to the running segments, and while a newly taken segment's
	 * runner is paused by it: so a {@link #resume()} (or {@link #pause()}) either finds the new runner or is seen
	 * by its take, and cannot be undone by a take that read the flag before it.
	 */
	private final Object pausing = new Object();

	private volatile boolean started;

	/**
	 * @param id the control's identity
	 * @param name the projection name of its lease and member rows
	 * @param segments its segments
	 * @param sharing with sharing, the engine's context; {@code null} without
	 * @param fencesSegmentCursors whether each segment has a cursor of its own, fenced when its lease is taken
	 * (from {@link #inherited} when absent); a shared fan-out's segments have none (each entity's runner fences its
	 * own cursor as it starts)
	 * @param counts counts the events after a cursor (the lag of segments run elsewhere), or {@code null}
	 */
	AbstractSegmentedControl(ProjectionId id, String name, List<SegmentedProjection.Segment> segments,
			SegmentOwnership.@Nullable Context sharing, boolean fencesSegmentCursors,
			@Nullable BiFunction<TagOffset, Integer, CompletionStage<Long>> counts) {
		this.id = id;
		this.segments = List.copyOf(segments);
		this.statuses = new SegmentStatuses(name, this.segments, sharing, counts);
		this.ownership = (sharing != null) ? new SegmentOwnership(name, this.segments, sharing, this::take,
				fencesSegmentCursors ? this::inherited : null, this.statuses::observe) : null;
	}

	/**
	 * @param count how many segments (a power of two)
	 * @param ids the identity of the segment of a slice range
	 * @return the segments, lowest range first, none run yet
	 */
	static List<SegmentedProjection.Segment> split(int count, Function<SliceRange, ProjectionId> ids) {
		List<SegmentedProjection.Segment> segments = new ArrayList<>();
		for (SliceRange range : SliceRange.split(count)) {
			segments.add(new SegmentedProjection.Segment(range, ids.apply(range)));
		}
		return segments;
	}

	/**
	 * @param controls runners
	 * @param limit at most this many
	 * @return the dead letters of every runner, in the order of the runners, at most {@code limit}
	 */
	static CompletionStage<List<DeadLetter>> deadLettersOf(Collection<? extends ProjectionControl> controls,
			int limit) {
		List<CompletableFuture<List<DeadLetter>>> each = controls.stream()
			.map((runner) -> runner.deadLetters(limit).toCompletableFuture()).toList();
		return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply((ignored) -> {
			List<DeadLetter> letters = new ArrayList<>();
			each.forEach((one) -> letters.addAll(one.join()));
			return letters.subList(0, Math.min(limit, letters.size()));
		});
	}

	/**
	 * @param controls runners
	 * @return how many dead letters they redelivered, each by its runner
	 */
	static CompletionStage<Integer> redeliverEach(Collection<? extends ProjectionControl> controls) {
		List<CompletableFuture<Integer>> each = controls.stream()
			.map((runner) -> runner.redeliverDeadLetters().toCompletableFuture()).toList();
		return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new))
			.thenApply((ignored) -> each.stream().mapToInt(CompletableFuture::join).sum());
	}

	/**
	 * Makes and starts the runner of a segment this instance now runs (under its lease term, when shared). It
	 * publishes it with {@link #publish} before it reads the pause flag.
	 * @param segment the segment
	 * @param mayGoOn whether the term still holds (always true without sharing)
	 * @param cursor the segment's cursor (fenced under the term, when shared)
	 * @return its runner
	 */
	abstract SegmentRunner take(SegmentedProjection.Segment segment, BooleanSupplier mayGoOn, OffsetStore cursor);

	/**
	 * With sharing, for segments with a cursor of their own: where a segment whose cursor is absent starts.
	 * @param segment the segment
	 * @param offsets the engine's cursors (read without touching what they track for saves)
	 * @return the cursor to start from
	 */
	CompletionStage<TagOffset> inherited(SegmentedProjection.Segment segment, DurableStateOffsetStore offsets) {
		return CompletableFuture.completedFuture(TagOffset.START);
	}

	/**
	 * Publishes a segment's runner, then pauses it if this control is paused: a {@link #pause()} or
	 * {@link #resume()} meanwhile either finds it among the running ones or its flag is seen here (the check and the
	 * pause are made under the lock they take, so a resume cannot come between them and be undone).
	 * @param segment the segment
	 * @param runner its new runner
	 * @param beforePauseCheck runs between the two (a runner that must be started first)
	 */
	final void publish(SegmentedProjection.Segment segment, SegmentRunner runner, Runnable beforePauseCheck) {
		segment.runner = runner;
		beforePauseCheck.run();
		synchronized (this.pausing) {
			if (this.paused) {
				runner.pause();
			}
		}
	}

	/** @return with sharing, which segments this instance runs; {@code null} without */
	final @Nullable SegmentOwnership ownership() {
		return this.ownership;
	}

	/** @param started whether this control is started here (its status is RUNNING while it runs no segment) */
	final void started(boolean started) {
		this.started = started;
	}

	/** @return its segments, lowest range first */
	final List<SegmentedProjection.Segment> segments() {
		return this.segments;
	}

	@Override
	public final ProjectionId id() {
		return this.id;
	}

	/**
	 * Over the segments this instance runs: the worst state, the lowest cursor, the sums of events handled and
	 * skipped, the highest lag, the first deleted range a segment reports ({@link SegmentedProjection#combined}). An
	 * instance that runs no segment (others own them all) reports RUNNING while started.
	 */
	@Override
	public final ProjectionStatus status() {
		return SegmentedProjection.combined(this.id, this.started, running().stream().map(ProjectionControl::status)
			.toList());
	}

	@Override
	public final void pause() {
		synchronized (this.pausing) {
			this.paused = true;
			running().forEach(ProjectionControl::pause);
		}
	}

	@Override
	public final void resume() {
		synchronized (this.pausing) {
			this.paused = false;
			running().forEach(ProjectionControl::resume);
		}
	}

	/**
	 * Resets the segments this instance runs (with sharing, the others keep their cursors). With sharing, a
	 * segment whose reset fails (its runner stays stopped) is released at once, so that it does not stay held
	 * without a running owner: it is taken again (here or elsewhere) from its stored cursor; the failure still
	 * reaches the caller. A reset refused because another reset of the segment runs is not a failure of the
	 * segment: it keeps its lease, and the running reset goes on.
	 */
	@Override
	public CompletionStage<Void> reset(TagOffset offset) {
		SegmentOwnership shared = this.ownership;
		List<CompletableFuture<Void>> each = new ArrayList<>();
		for (SegmentedProjection.Segment segment : this.segments) {
			SegmentRunner runner = segment.runner;
			if (runner != null) {
				CompletableFuture<Void> reset = runner.reset(offset).toCompletableFuture();
				each.add((shared == null) ? reset : reset.whenComplete((ok, error) -> {
					if (error != null && !ResetInProgressException.isRefusal(error)) {
						shared.resetFailed(segment, runner, error);
					}
				}));
			}
		}
		// The caller is told a segment's real failure before another segment's refusal.
		return ResetInProgressException.allOf(each);
	}

	@Override
	public final void skipCurrent() {
		running().forEach(ProjectionControl::skipCurrent);
	}

	/**
	 * Redelivers the dead letters of the segments this instance runs, each by its segment's runner; with sharing,
	 * the letters of segments other instances run stay for them.
	 */
	@Override
	public final CompletionStage<Integer> redeliverDeadLetters() {
		return redeliverEach(running());
	}

	@Override
	public final List<SegmentStatus> segmentStatus() {
		return this.statuses.local();
	}

	@Override
	public final CompletionStage<List<SegmentStatus>> readSegmentStatus() {
		return this.statuses.read();
	}

	@Override
	public final CompletionStage<List<SegmentStatus>> readSegmentOwners() {
		return this.statuses.readOwners();
	}

	/** @return the runners of the segments this instance runs now */
	final List<SegmentRunner> running() {
		List<SegmentRunner> running = new ArrayList<>();
		for (SegmentedProjection.Segment segment : this.segments) {
			SegmentRunner runner = segment.runner;
			if (runner != null) {
				running.add(runner);
			}
		}
		return running;
	}

}
