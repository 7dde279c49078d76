package io.cassandrajournal.projection;

import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
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
final class SharedFanOut extends AbstractSegmentedControl {

	/** The key of a shared fan-out's identity (never a tag, filter or persistenceId key: see {@link ProjectionId}). */
	static final String KEY = "fan-out(*)";

	/** Makes the runner of one entity under a segment's lease term (not started). */
	@FunctionalInterface
	interface Entities {

		/** @return the entity's runner, or {@code null} when the fan-out does not run it */
		@Nullable ProjectionRunner<?> create(String persistenceId, BooleanSupplier mayGoOn, OffsetStore cursor);

	}

	private final Entities entities;

	private final ToIntFunction<String> slices;

	/** The engine's cursors: a failed entity's status reads its stored cursor there. */
	private final DurableStateOffsetStore offsets;

	/** The engine's executor: a segment's reset reports its outcome there ({@link FanOutSegment}). */
	private final Executor completions;

	/** Every persistenceId discovered so far (a segment taken later starts all of its own). */
	private final Set<String> known = ConcurrentHashMap.newKeySet();

	/**
	 * @param name the fan-out's name prefix
	 * @param segments how many segments (a power of two, checked by {@link ProjectionSettings})
	 * @param entities makes an entity's runner under a segment's term
	 * @param slices the slice of a persistenceId (the read journal's)
	 * @param sharing the engine's sharing context
	 * @param completions the engine's executor, where a segment's reset reports its outcome
	 */
	SharedFanOut(String name, int segments, Entities entities, ToIntFunction<String> slices,
			SegmentOwnership.Context sharing, Executor completions) {
		// No cursor of the segment itself to fence on a take: each entity's runner fences its own as it starts.
		super(new ProjectionId(name, KEY), name, split(segments, new ProjectionId(name, KEY)::segment), sharing,
				false, null);
		this.entities = entities;
		this.slices = slices;
		this.offsets = sharing.offsets();
		this.completions = completions;
	}

	/** Starts the runners of a segment's known entities under the lease term just taken. */
	@Override
	SegmentRunner take(SegmentedProjection.Segment segment, BooleanSupplier mayGoOn, OffsetStore cursor) {
		// A failed entity's cursor is peeked, not loaded: a load would touch what the store tracks for the saves.
		FanOutSegment runner = new FanOutSegment(segment.id, (entity) -> this.entities.create(entity, mayGoOn, cursor),
				this.offsets::peek, this.completions);
		// Published before the known entities are read: an entity discovered meanwhile is added by discovered() or
		// found here (add is idempotent). Publication included in the take's adds: a reset that reaches the segment
		// before they end covers every entity they add (docs/reliability.md, finding 29, item 10).
		runner.whileTaking(() -> {
			publish(segment, runner, () -> {
			});
			for (String entity : this.known) {
				if (segment.range.contains(this.slices.applyAsInt(entity))) {
					runner.add(entity);
				}
			}
		});
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
		for (SegmentedProjection.Segment segment : segments()) {
			if (segment.range.contains(slice)) {
				return segment;
			}
		}
		throw new IllegalStateException("no segment holds slice " + slice);
	}

	@Override
	public CompletionStage<Void> start() {
		started(true);
		return Objects.requireNonNull(ownership()).start();
	}

	/** Hands every segment over: its entities' runners stop after their batch in hand, then the lease is released. */
	@Override
	public CompletionStage<Void> stop() {
		started(false);
		return Objects.requireNonNull(ownership()).stop();
	}

	/**
	 * Rebuilds every entity this instance runs from the start (others keep their cursors); no other offset, since
	 * each entity has its own sequence numbers. A segment one of whose entities failed to reset is released and
	 * taken again from the stored cursors, as a by-tag segment is; the failure still reaches the caller.
	 */
	@Override
	public CompletionStage<Void> reset(TagOffset offset) {
		if (!TagOffset.START.equals(offset)) {
			return CompletableFuture.failedFuture(new IllegalArgumentException("fan-out '" + id().name()
					+ "' resets its entities from the start only: each entity has its own sequence numbers"));
		}
		return super.reset(offset);
	}

	@Override
	public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
		return deadLettersOf(running(), limit);
	}

	@Override
	public void wake(AppendResult result) {
		if (segmentOf(result.persistenceId()).runner instanceof FanOutSegment runner) {
			runner.wake(result);
		}
	}

}
