package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
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
 * <p>
 * Locks: this segment's lock guards its maps and flags; the application's handler factory runs outside it (a slow
 * factory must not hold up the segment's status and control calls). A reset in progress ({@link Reset}) has a lock
 * of its own, taken last, under which no other lock is taken and no future completes: the entities' resets end on
 * any thread, which may hold a runner's lock, so their end must not wait for this segment's lock. A reset's outcome
 * reaches its caller on the engine's executor, never on the thread that released its last hold (the lease thread at
 * the end of a take, or whichever thread ended an entity's reset): the caller's dependent stages run there, and one
 * that waited for the lease thread, or called back into this segment, would block it or deadlock.
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

	/** Where a reset's outcome is handed to its caller: the engine's executor. */
	private final Executor completions;

	private final Map<String, ProjectionRunner<?>> runners = new ConcurrentHashMap<>();

	/** Entities whose runner could not be made or started under this term (the user's handler factory threw). */
	private final Map<String, FailedEntityCursor> failed = new ConcurrentHashMap<>();

	/** Guarded by this: whether entities may still be added (false once stopped). */
	private boolean active = true;

	/** Guarded by this. */
	private boolean paused;

	/**
	 * Guarded by this: the entities whose runner is being made (the factory runs outside the lock), each with the
	 * resets that wait for its add. A second add of one of them returns at once: one runner per entity.
	 */
	private final Map<String, List<Join>> adding = new HashMap<>();

	/**
	 * Guarded by this: while the take adds the known entities ({@link #whileTaking}), the resets that wait for those
	 * adds; {@code null} otherwise.
	 */
	private @Nullable List<Reset> taking;

	/** Guarded by this: the resets in progress (one found ended is dropped). */
	private final List<Reset> resets = new ArrayList<>();

	/**
	 * @param id the segment's identity (it has no cursor of its own)
	 * @param runnerFor makes the runner of one entity under the segment's term
	 * @param storedCursors reads an entity's stored cursor (for the status of an entity that failed)
	 * @param completions where a reset's outcome is handed to its caller (the engine's executor)
	 */
	FanOutSegment(ProjectionId id, Function<String, @Nullable ProjectionRunner<?>> runnerFor,
			Function<ProjectionId, CompletionStage<Optional<TagOffset>>> storedCursors, Executor completions) {
		this.id = id;
		this.runnerFor = runnerFor;
		this.storedCursors = storedCursors;
		this.completions = completions;
	}

	/**
	 * Runs the adds of this segment's take (the entities known when it was taken; the take publishes the segment
	 * first, so that an entity discovered meanwhile is not missed), once, before any reset can reach the segment.
	 * A reset that begins before they end waits for them and covers every entity they add: it used to reset the
	 * entities added so far and complete, while the take added the others with their old cursors
	 * (docs/reliability.md, finding 29, item 10).
	 * @param adds the take's adds, calling {@link #add} on this segment's entities
	 */
	void whileTaking(Runnable adds) {
		synchronized (this) {
			this.taking = new ArrayList<>();
		}
		Throwable failure = null;
		try {
			adds.run();
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			List<Reset> waiting;
			synchronized (this) {
				waiting = (this.taking != null) ? this.taking : List.of();
				this.taking = null;
			}
			if (failure != null) {
				// The take did not add every entity: a reset that waited for it may have left some out, so it
				// does not report success (the segment is released for the take's failure anyway).
				IllegalStateException incomplete = new IllegalStateException("the take of fan-out segment " + this.id
						+ " failed before it added every entity; a reset during it may have left some out", failure);
				waiting.forEach((reset) -> reset.failed(incomplete));
			}
			waiting.forEach((reset) -> reset.release(true));
		}
	}

	/**
	 * Starts the runner of an entity of this segment, unless it runs already, is being added, failed under this
	 * term or the segment was stopped. The handler factory runs outside this segment's lock (it is the
	 * application's code, and may be slow); the runner is then published and started in one locked step, so a
	 * control call never reaches a runner whose start has not been called (docs/reliability.md, finding 29, item 2).
	 * A reset begun while the factory runs, or one that the add joins as it begins (see {@link #reset} for which),
	 * waits for the add and resets the new runner instead of starting it: it starts from the reset's offset before
	 * it handles anything (finding 29, item 10).
	 * @param persistenceId an entity whose slice falls in the segment
	 */
	void add(String persistenceId) {
		List<Join> waiting = new ArrayList<>();
		synchronized (this) {
			if (!this.active || this.runners.containsKey(persistenceId) || this.failed.containsKey(persistenceId)
					|| this.adding.containsKey(persistenceId)) {
				return;
			}
			for (Reset reset : openResets()) {
				// An add while the take runs is one of the entities a reset begun during the take covers.
				boolean covered = this.taking != null && this.taking.contains(reset);
				if (reset.join(covered)) {
					waiting.add(new Join(reset, covered));
				}
			}
			this.adding.put(persistenceId, waiting);
		}
		try {
			ProjectionRunner<?> runner = null;
			FailedEntityCursor failure = null;
			try {
				runner = this.runnerFor.apply(persistenceId);
			}
			catch (Exception | Error ex) {
				if (Errors.fatal(ex)) {
					throw ex;
				}
				// One entity's failure (the user's handler factory, its meters; an exception or an Error such as a
				// handler class that cannot be initialized) never stops the others: it stays FAILED for this term and
				// is tried again when the segment is next taken. An Error let through would end the lease loop (the
				// segment's take runs on it) while the renewals kept the segment held, or end the fan-out's discovery
				// task.
				logger.error("Fan-out segment {}: could not create the runner of entity {}; it does not run until the "
						+ "segment is taken again", this.id, persistenceId, ex);
				// Its status shows its stored cursor, where it resumes, once read (it showed START; finding 32).
				ProjectionId entity = ProjectionId.byPersistenceId(this.id.name() + "-" + persistenceId, persistenceId);
				failure = FailedEntityCursor.read(entity, "could not create its runner: " + ex,
						() -> this.storedCursors.apply(entity));
			}
			added(persistenceId, runner, failure);
		}
		finally {
			// On every path, a fatal error included: a hold never released would keep the resets open for the rest
			// of the term (and turn every later add into a rebuild). Released out of this segment's lock: the last
			// release completes a reset, whose callers' code runs.
			List<Join> release;
			synchronized (this) {
				this.adding.remove(persistenceId, waiting);
				release = List.copyOf(waiting);
			}
			release.forEach(Join::release);
		}
	}

	/**
	 * The locked end of an add: publishes the runner and starts it, or has the resets waiting for the add reset it
	 * (the first one starts it; a second reset in progress is refused by the runner, as it is by each runner it
	 * listed). Once the segment is stopped nothing is published: the runner made meanwhile is retired, never
	 * started, and a reset that waited for it still resets it (its cursor written while the term lets it, as for
	 * the runners the reset listed; docs/reliability.md, finding 29, item 9), so the reset never reports an entity
	 * rebuilt that it left out. The reset leaves the new runner as the segment is: paused in a paused segment
	 * (never running first). The caller releases the resets that waited, out of this lock.
	 */
	private synchronized void added(String persistenceId, @Nullable ProjectionRunner<?> runner,
			@Nullable FailedEntityCursor failure) {
		// From here no reset joins the add: a reset that begins now lists the published runner instead.
		List<Join> waiting = Objects.requireNonNull(this.adding.remove(persistenceId));
		if (!this.active) {
			if (runner != null && !waiting.isEmpty()) {
				runner.retire();
				waiting.forEach((join) -> join.reset(runner, ProjectionState.STOPPED));
			}
			return;
		}
		if (failure != null) {
			this.failed.put(persistenceId, failure);
		}
		if (runner == null) {
			return;
		}
		this.runners.put(persistenceId, runner);
		if (waiting.isEmpty()) {
			runner.start();
			if (this.paused) {
				runner.pause();
			}
		}
		else {
			// No start first: the reset is the runner's start (its cursor is fenced before the reset writes it:
			// FencedCursor#delete), so it reads nothing from the old cursor. In a paused segment it starts it paused
			// (a pause after it could come after its first batch), and a resume meanwhile runs it.
			ProjectionState ifStopped = this.paused ? ProjectionState.PAUSED : ProjectionState.RUNNING;
			waiting.forEach((join) -> join.reset(runner, ifStopped));
		}
	}

	/** @return the resets in progress, with those found ended dropped */
	private List<Reset> openResets() {
		this.resets.removeIf(Reset::over);
		return this.resets;
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

	/**
	 * Resets every entity's runner, including entities added while the reset runs, by this rule
	 * (docs/reliability.md, finding 29, items 10 and 12):
	 * <ul>
	 * <li>It <b>covers</b> the entities this segment has when it begins: the runners it lists (under this segment's
	 * lock, so never one whose start has not been called), the entities whose add is in flight then and, when it
	 * begins during the take, every entity added until the take ends.</li>
	 * <li>While any entity it covers is not reset yet (its add or its reset has not ended), an entity whose add
	 * begins <b>joins</b> it: it is reset instead of started, so it reads nothing from its old cursor.</li>
	 * <li>Once every entity it covers is reset, no add joins it any more: an entity whose add begins then starts
	 * from its stored cursor, as one whose add begins after the reset completed always did.</li>
	 * <li>It completes once every entity it covers or that joined it is reset, with the first real failure among
	 * them (else a refusal, else success). So none of them runs from its old cursor once it reports success, and it
	 * ends however fast entities are discovered: within the time the entities it covers take to be added and reset,
	 * plus one add and reset of the entities that joined meanwhile. It used to take in every add that began before
	 * it ended, so a steady discovery could keep it open for as long as new entities kept arriving.</li>
	 * </ul>
	 * An entity's reset leaves its runner as this segment is: running, paused in a paused segment, and stopped in a
	 * stopped one (an operator's {@link #stop()}: the reset stores the offset and starts nothing, as the segment adds
	 * nothing; it used to start the listed runners again). Calls during the reset still decide
	 * ({@link ProjectionRunner#reset(TagOffset, ProjectionState)}). The outcome reaches the caller on the engine's
	 * executor.
	 */
	@Override
	public CompletionStage<Void> reset(TagOffset offset) {
		Reset reset = new Reset(offset, this.completions);
		List<ProjectionRunner<?>> listed;
		ProjectionState ifStopped;
		synchronized (this) {
			listed = List.copyOf(this.runners.values());
			ifStopped = !this.active ? ProjectionState.STOPPED
					: this.paused ? ProjectionState.PAUSED : ProjectionState.RUNNING;
			openResets().add(reset);
			for (List<Join> waiting : this.adding.values()) {
				reset.join(true);
				waiting.add(new Join(reset, true));
			}
			if (this.taking != null) {
				reset.join(true);
				this.taking.add(reset);
			}
		}
		try {
			listed.forEach((runner) -> reset.reset(runner, ifStopped, true));
		}
		finally {
			reset.release(true);
		}
		// A real failure of one entity is reported before another's refusal (a reset of it ran already): the
		// owner releases the segment for the first, not for the second.
		return reset.ended.thenCompose(ResetInProgressException::allOf);
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
	 * {@link #add} holds from putting a runner in the map until its start (or its reset) has been called: a control
	 * call never reaches a runner whose start (and so whose fence) has not begun yet (docs/reliability.md, finding 29).
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

	/** A reset that waits for an add, and whether the add is one of the entities the reset covers. */
	private record Join(Reset reset, boolean covered) {

		void reset(ProjectionRunner<?> runner, ProjectionState ifStopped) {
			this.reset.reset(runner, ifStopped, this.covered);
		}

		void release() {
			this.reset.release(this.covered);
		}

	}

	/**
	 * A reset of this segment in progress. It is held by its own listing, by each add that waits for it, by the
	 * take's adds and by each entity's reset it started; when the last hold is released it ends, and only then
	 * hands over the entities' resets, all ended, so that one added late is never left out of the outcome. The holds
	 * of what it covers ({@link FanOutSegment#reset}) are counted apart: while any is held, an add joins it; once none
	 * is, none does, so the holds left can only end. Its lock is taken last (under the segment's lock or alone) and
	 * {@link #ended} completes out of it, on the engine's executor.
	 */
	private static final class Reset {

		private final TagOffset offset;

		private final Executor completions;

		/** Guarded by this: the entities' resets. */
		private final List<CompletableFuture<Void>> each = new ArrayList<>();

		/** Guarded by this: what still holds it (1: its listing). */
		private int holds = 1;

		/** Guarded by this: of those, the holds of what it covers (1: its listing); an add joins it while any. */
		private int covering = 1;

		/** Guarded by this. */
		private boolean over;

		/** Completes with the entities' resets, all ended, once nothing holds this reset (on the executor). */
		final CompletableFuture<List<CompletableFuture<Void>>> ended = new CompletableFuture<>();

		Reset(TagOffset offset, Executor completions) {
			this.offset = offset;
			this.completions = completions;
		}

		synchronized boolean over() {
			return this.over;
		}

		/**
		 * @param covered whether the add is one of the entities this reset covers (always joined while it runs)
		 * @return whether the add joins it (false: it ended, or every entity it covers is reset already)
		 */
		synchronized boolean join(boolean covered) {
			if (this.over || (!covered && this.covering == 0)) {
				return false;
			}
			this.holds++;
			if (covered) {
				this.covering++;
			}
			return true;
		}

		/**
		 * Resets one entity's runner as part of this reset; the caller holds it, so it has not ended.
		 * @param runner the entity's runner
		 * @param ifStopped what the reset leaves the runner in if it finds it stopped (or new)
		 * @param covered whether the entity is one this reset covers
		 */
		void reset(ProjectionRunner<?> runner, ProjectionState ifStopped, boolean covered) {
			CompletableFuture<Void> one;
			Throwable fatal = null;
			try {
				one = runner.reset(this.offset, ifStopped).toCompletableFuture();
			}
			catch (Exception | Error ex) {
				// Recorded, so that this reset reports it and its holds stay balanced; a fatal error goes on up.
				one = CompletableFuture.failedFuture(ex);
				fatal = Errors.fatal(ex) ? ex : null;
			}
			synchronized (this) {
				this.each.add(one);
				this.holds++;
				if (covered) {
					this.covering++;
				}
			}
			one.whenComplete((ok, error) -> release(covered));
			if (fatal instanceof Error error) {
				throw error;
			}
		}

		/**
		 * Records a failure of this reset that is not one entity's (the take it waited for failed); the caller
		 * holds it, so it has not ended.
		 */
		synchronized void failed(Throwable error) {
			this.each.add(CompletableFuture.failedFuture(error));
		}

		/** @param covered whether the hold was one of what this reset covers */
		void release(boolean covered) {
			List<CompletableFuture<Void>> all;
			synchronized (this) {
				if (covered) {
					this.covering--;
				}
				if (--this.holds > 0) {
					return;
				}
				this.over = true;
				all = List.copyOf(this.each);
			}
			// On the executor: the caller's dependent stages must not run on this thread (the lease thread at the
			// end of a take, a thread that ended an entity's reset). Once the engine closes, here.
			try {
				this.completions.execute(() -> this.ended.complete(all));
			}
			catch (RejectedExecutionException closing) {
				this.ended.complete(all);
			}
		}

	}

}
