package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.ToIntFunction;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.query.TagOffset;

/**
 * A per-persistenceId fan-out shared by the instances of an engine with sharing: split by slice into segments like
 * a by-tag projection, each segment under a lease ({@link SegmentOwnership}, the machinery by-tag segments use,
 * with the fan-out's name as the projection name of its lease and member rows). On each instance only the entities
 * whose slice falls in a segment it holds get runners ({@link FanOutSegment}), each with its own cursor (the same
 * one as without sharing, {@code <namePrefix>-<persistenceId>}), fenced by its segment's lease epoch: an instance
 * that lost a segment's lease cannot move the cursor of any of its entities whose runner the new owner has started
 * (it starts every entity it knows of at once when it takes the segment). Losing a segment stops its entities'
 * runners at once; taking one starts them from the stored cursors. Entities discovered later
 * ({@link io.cassandrajournal.query.LivePersistenceIds}) are routed to their segment, and run here if this instance
 * holds it. Where this fits: {@link ProjectionEngine#fanOut} makes and registers one on a sharing engine.
 * <p>
 * The control calls act on the entities this instance runs; a reset only rebuilds them from the start.
 */
final class SharedFanOut implements SegmentedControl {

	/** The key of a shared fan-out's identity (never a tag, filter or persistenceId key: see {@link ProjectionId}). */
	static final String KEY = "fan-out(*)";

	/** Makes the runner of one entity under a segment's lease term (not started). */
	@FunctionalInterface
	interface Entities {

		/** @return the entity's runner, or {@code null} when the fan-out does not run it */
		@Nullable ProjectionRunner<?> create(String persistenceId, BooleanSupplier mayGoOn, OffsetStore cursor);

	}

	private final ProjectionId id;

	private final List<SegmentedProjection.Segment> segments = new ArrayList<>();

	private final Entities entities;

	private final ToIntFunction<String> slices;

	/** Every persistenceId discovered so far (a segment taken later starts all of its own). */
	private final Set<String> known = ConcurrentHashMap.newKeySet();

	private final SegmentOwnership ownership;

	private final SegmentStatuses statuses;

	private volatile boolean paused;

	private volatile boolean started;

	/**
	 * @param name the fan-out's name prefix
	 * @param segments how many segments (a power of two, checked by {@link ProjectionSettings})
	 * @param entities makes an entity's runner under a segment's term
	 * @param slices the slice of a persistenceId (the read journal's)
	 * @param sharing the engine's sharing context
	 */
	SharedFanOut(String name, int segments, Entities entities, ToIntFunction<String> slices,
			SegmentOwnership.Context sharing) {
		this.id = new ProjectionId(name, KEY);
		this.entities = entities;
		this.slices = slices;
		for (SliceRange range : SliceRange.split(segments)) {
			this.segments.add(new SegmentedProjection.Segment(range, this.id.segment(range)));
		}
		this.statuses = new SegmentStatuses(name, this.segments, sharing, null);
		// No cursor of the segment itself to fence on a take: each entity's runner fences its own as it starts.
		this.ownership = new SegmentOwnership(name, this.segments, sharing, this::run, null, this.statuses::observe);
	}

	/** Starts the runners of a segment's known entities under the lease term just taken. */
	private SegmentRunner run(SegmentedProjection.Segment segment, BooleanSupplier mayGoOn, OffsetStore cursor) {
		FanOutSegment runner = new FanOutSegment(segment.id, (entity) -> this.entities.create(entity, mayGoOn, cursor));
		// Published before the known entities are read: an entity discovered meanwhile is added by discovered() or
		// found here (add is idempotent). Published before the pause flag is read, too: a pause() meanwhile either
		// finds this runner among the running ones or its flag is seen here.
		segment.runner = runner;
		if (this.paused) {
			runner.pause();
		}
		for (String entity : this.known) {
			if (segment.range.contains(this.slices.applyAsInt(entity))) {
				runner.add(entity);
			}
		}
		return runner;
	}

	/**
	 * Routes newly seen persistenceIds to their segments: each runs at once if this instance holds its segment,
	 * else when (if ever) it takes it.
	 * @param persistenceIds ids not seen before
	 */
	void discovered(Collection<String> persistenceIds) {
		// All known first: a segment taken later starts them even if routing one of them below fails.
		this.known.addAll(persistenceIds);
		for (String entity : persistenceIds) {
			SegmentedProjection.Segment segment = segmentOf(entity);
			if (segment.runner instanceof FanOutSegment runner) {
				runner.add(entity);
			}
		}
	}

	private SegmentedProjection.Segment segmentOf(String entity) {
		int slice = this.slices.applyAsInt(entity);
		for (SegmentedProjection.Segment segment : this.segments) {
			if (segment.range.contains(slice)) {
				return segment;
			}
		}
		throw new IllegalStateException("no segment holds slice " + slice);
	}

	/** @return its segments (tests) */
	List<SegmentedProjection.Segment> segments() {
		return this.segments;
	}

	@Override
	public ProjectionId id() {
		return this.id;
	}

	@Override
	public CompletionStage<Void> start() {
		this.started = true;
		return this.ownership.start();
	}

	/** Hands every segment over: its entities' runners stop after their batch in hand, then the lease is released. */
	@Override
	public CompletionStage<Void> stop() {
		this.started = false;
		return this.ownership.stop();
	}

	@Override
	public ProjectionStatus status() {
		return SegmentedProjection.combined(this.id, this.started, running().stream().map(ProjectionControl::status)
			.toList());
	}

	@Override
	public void pause() {
		this.paused = true;
		running().forEach(ProjectionControl::pause);
	}

	@Override
	public void resume() {
		this.paused = false;
		running().forEach(ProjectionControl::resume);
	}

	/**
	 * Rebuilds every entity this instance runs from the start (others keep their cursors); no other offset, since
	 * each entity has its own sequence numbers. A segment one of whose entities failed to reset is released and
	 * taken again from the stored cursors; the failure still reaches the caller.
	 */
	@Override
	public CompletionStage<Void> reset(TagOffset offset) {
		if (!TagOffset.START.equals(offset)) {
			return CompletableFuture.failedFuture(new IllegalArgumentException("fan-out '" + this.id.name()
					+ "' resets its entities from the start only: each entity has its own sequence numbers"));
		}
		List<CompletableFuture<Void>> each = new ArrayList<>();
		for (SegmentedProjection.Segment segment : this.segments) {
			if (segment.runner instanceof FanOutSegment runner) {
				// As for a by-tag segment: one whose reset failed is released, and taken again from stored cursors.
				each.add(runner.reset(offset).toCompletableFuture().whenComplete((ok, error) -> {
					if (error != null) {
						this.ownership.resetFailed(segment, runner, error);
					}
				}));
			}
		}
		return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new));
	}

	@Override
	public void skipCurrent() {
		running().forEach(ProjectionControl::skipCurrent);
	}

	@Override
	public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
		List<CompletableFuture<List<DeadLetter>>> each = running().stream()
			.map((runner) -> runner.deadLetters(limit).toCompletableFuture()).toList();
		return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new)).thenApply((ignored) -> {
			List<DeadLetter> letters = new ArrayList<>();
			each.forEach((one) -> letters.addAll(one.join()));
			return letters.subList(0, Math.min(limit, letters.size()));
		});
	}

	@Override
	public CompletionStage<Integer> redeliverDeadLetters() {
		List<CompletableFuture<Integer>> each = running().stream()
			.map((runner) -> runner.redeliverDeadLetters().toCompletableFuture()).toList();
		return CompletableFuture.allOf(each.toArray(CompletableFuture[]::new))
			.thenApply((ignored) -> each.stream().mapToInt(CompletableFuture::join).sum());
	}

	@Override
	public void wake(AppendResult result) {
		if (segmentOf(result.persistenceId()).runner instanceof FanOutSegment runner) {
			runner.wake(result);
		}
	}

	@Override
	public List<SegmentStatus> segmentStatus() {
		return this.statuses.local();
	}

	@Override
	public CompletionStage<List<SegmentStatus>> readSegmentStatus() {
		return this.statuses.read();
	}

	@Override
	public CompletionStage<List<SegmentStatus>> readSegmentOwners() {
		return this.statuses.readOwners();
	}

	private List<FanOutSegment> running() {
		List<FanOutSegment> running = new ArrayList<>();
		for (SegmentedProjection.Segment segment : this.segments) {
			if (segment.runner instanceof FanOutSegment runner) {
				running.add(runner);
			}
		}
		return running;
	}

}
