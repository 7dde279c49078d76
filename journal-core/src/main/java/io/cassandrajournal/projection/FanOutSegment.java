package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.query.TagOffset;

/**
 * The runners of a shared fan-out's entities whose slices fall in one segment, for one lease term of that segment.
 * Each is a by-persistenceId {@link ProjectionRunner} with its own cursor, made by the fan-out under the term: it
 * handles and reads only while the term is valid, fences its cursor under the term's epoch when it starts
 * ({@link FencedCursor#load}) and saves under it, and a save refused because a newer owner fenced the cursor ends
 * the term, which stops every runner of the segment. Entities are added as the fan-out learns of them; once stopped
 * (the term ended or the segment is handed over) none is added again. Where this fits: {@link SharedFanOut} makes
 * one each time {@link SegmentOwnership} takes a segment.
 */
final class FanOutSegment implements SegmentRunner {

	private static final Logger logger = LoggerFactory.getLogger(FanOutSegment.class);

	private final ProjectionId id;

	/**
	 * Makes the runner of one entity under this segment's term (not started); {@code null} for an entity that is not
	 * run by the fan-out (a projection registered on its own has its cursor).
	 */
	private final Function<String, @Nullable ProjectionRunner<?>> runnerFor;

	/** Reads an entity's stored cursor for its status, without touching what the offset store tracks for saves. */
	private final Function<ProjectionId, CompletionStage<Optional<TagOffset>>> storedCursors;

	private final Map<String, ProjectionRunner<?>> runners = new ConcurrentHashMap<>();

	/** Entities whose runner could not be made or started under this term (the user's handler factory threw). */
	private final Map<String, FailedEntityCursor> failed = new ConcurrentHashMap<>();

	/** Guarded by this: whether entities may still be added (false once stopped). */
	private boolean active = true;

	/** Guarded by this. */
	private boolean paused;

	/**
	 * @param id the segment's identity (it has no cursor of its own)
	 * @param runnerFor makes the runner of one entity under the segment's term
	 * @param storedCursors reads an entity's stored cursor (for the status of an entity that failed)
	 */
	FanOutSegment(ProjectionId id, Function<String, @Nullable ProjectionRunner<?>> runnerFor,
			Function<ProjectionId, CompletionStage<Optional<TagOffset>>> storedCursors) {
		this.id = id;
		this.runnerFor = runnerFor;
		this.storedCursors = storedCursors;
	}

	/**
	 * Starts the runner of an entity of this segment, unless it runs already or the segment was stopped.
	 * @param persistenceId an entity whose slice falls in the segment
	 */
	synchronized void add(String persistenceId) {
		if (!this.active || this.runners.containsKey(persistenceId) || this.failed.containsKey(persistenceId)) {
			return;
		}
		ProjectionRunner<?> runner;
		try {
			runner = this.runnerFor.apply(persistenceId);
		}
		catch (Exception | Error ex) {
			if (Errors.fatal(ex)) {
				throw ex;
			}
			// One entity's failure (the user's handler factory, its meters; an exception or an Error such as a
			// handler class that cannot be initialized) never stops the others: it stays FAILED for this term and is
			// tried again when the segment is next taken. An Error let through would end the lease loop (the segment's
			// take runs on it) while the renewals kept the segment held, or end the fan-out's discovery task.
			logger.error("Fan-out segment {}: could not create the runner of entity {}; it does not run until the "
					+ "segment is taken again", this.id, persistenceId, ex);
			// Its status shows its stored cursor, where it resumes, once read (it showed START; finding 32).
			ProjectionId entity = ProjectionId.byPersistenceId(this.id.name() + "-" + persistenceId, persistenceId);
			this.failed.put(persistenceId, FailedEntityCursor.read(entity, "could not create its runner: " + ex,
					() -> this.storedCursors.apply(entity)));
			return;
		}
		if (runner == null) {
			return;
		}
		this.runners.put(persistenceId, runner);
		runner.start();
		if (this.paused) {
			runner.pause();
		}
	}

	/** @return how many entities this segment runs */
	int entities() {
		return this.runners.size();
	}

	@Override
	public ProjectionId id() {
		return this.id;
	}

	/** Over its entities' runners: see {@link SegmentedProjection#combined}. */
	@Override
	public synchronized ProjectionStatus status() {
		List<ProjectionStatus> each = new ArrayList<>();
		this.failed.values().forEach((entity) -> each.add(entity.status()));
		this.runners.values().forEach((runner) -> each.add(runner.status()));
		return SegmentedProjection.combined(this.id, this.active, each);
	}

	@Override
	public CompletionStage<Void> start() {
		return all(ProjectionControl::start);
	}

	/** Stops every entity's runner after its batch in hand (its cursor stored); no entity is added afterwards. */
	@Override
	public CompletionStage<Void> stop() {
		synchronized (this) {
			this.active = false;
		}
		return all(ProjectionControl::stop);
	}

	/** Retires every entity's runner (see {@link SegmentRunner#retire()}); no entity is added afterwards. */
	@Override
	public CompletionStage<Void> retire() {
		synchronized (this) {
			this.active = false;
		}
		return all(ProjectionRunner::retire);
	}

	@Override
	public synchronized void pause() {
		this.paused = true;
		this.runners.values().forEach(ProjectionControl::pause);
	}

	@Override
	public synchronized void resume() {
		this.paused = false;
		this.runners.values().forEach(ProjectionControl::resume);
	}

	@Override
	public CompletionStage<Void> reset(TagOffset offset) {
		List<CompletableFuture<Void>> each = each((runner) -> runner.reset(offset));
		// A real failure of one entity is reported before another's refusal (a reset of it ran already): the
		// owner releases the segment for the first, not for the second.
		return ResetInProgressException.allOf(each);
	}

	@Override
	public void skipCurrent() {
		this.runners.values().forEach(ProjectionControl::skipCurrent);
	}

	@Override
	public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
		return AbstractSegmentedControl.deadLettersOf(this.runners.values(), limit);
	}

	@Override
	public CompletionStage<Integer> redeliverDeadLetters() {
		return AbstractSegmentedControl.redeliverEach(this.runners.values());
	}

	@Override
	public void wake(AppendResult result) {
		ProjectionRunner<?> runner = this.runners.get(result.persistenceId());
		if (runner != null) {
			runner.wake(result);
		}
	}

	/**
	 * Applies a control call to every entity's runner. The runners are listed under this segment's lock, which
	 * {@link #add} holds from putting a runner in the map until its start has been called: a reset never reaches a
	 * runner whose start (and so whose fence) has not begun yet (docs/reliability.md, finding 29).
	 */
	private CompletionStage<Void> all(Function<ProjectionRunner<?>, CompletionStage<Void>> action) {
		return CompletableFuture.allOf(each(action).toArray(CompletableFuture[]::new));
	}

	private List<CompletableFuture<Void>> each(Function<ProjectionRunner<?>, CompletionStage<Void>> action) {
		List<ProjectionRunner<?>> each;
		synchronized (this) {
			each = List.copyOf(this.runners.values());
		}
		return each.stream().map((runner) -> action.apply(runner).toCompletableFuture()).toList();
	}

}
