package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Predicate;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * Runs one projection: load the offset, poll the source, hand each event of the batch to
 * {@link FailureHandling} through {@link Lanes}, store the offset after the batch, repeat. One batch at a
 * time; the handler runs on the engine's executor (or the lanes' threads), never on a driver thread.
 * <p>
 * The state machine is {@link RunState}; this class owns the poll loop's own state under its lock: the
 * source, the stored offset, the batch in flight, the scheduled poll, a reset in progress and the lanes'
 * threads. The batch in flight is one future: {@link #stop()} returns it (and so does the stop inside
 * {@link #reset}), {@link #start()} waits for it before loading the offset, and its end schedules the next
 * batch whenever the projection is active, so RUNNING always has a batch in flight or scheduled. After any
 * failed batch other than a stop, the source is created again from the stored offset.
 * <p>
 * <b>Saves behind the reads</b> (a projection that is not shared): a batch's end hands its offset to the save and
 * the next batch is read at once, without waiting for the save (a compare-and-set, four round trips); at most
 * one save is in flight, and offsets handed over meanwhile are coalesced into the newest, saved when it ends.
 * Only an offset whose events were all handled is ever handed over, so at-least-once holds; the stored offset
 * trails the handled events by at most the save in flight. {@link #stop()} and {@link #start()} wait for the
 * saves too, and a failed save fails the next batch's end (reading again from the stored offset, as a failed
 * batch does). A segment of a shared projection saves before its next batch, as before: its save is fenced, and
 * a refused save must stop it before it handles another batch.
 *
 * @param <E> the payload type
 */
final class ProjectionRunner<E> implements SegmentRunner {

	private static final Logger logger = LoggerFactory.getLogger(ProjectionRunner.class);

	private final Projection<E> projection;

	private final ProjectionId id;

	private final ProjectionSettings settings;

	private final Function<TagOffset, ProjectionSource> sources;

	private final OffsetStore offsets;

	private final ProjectionMetrics metrics;

	private final ScheduledExecutorService executor;

	private final RunState run;

	private final FailureHandling<E> failures;

	private final Lag lag;

	/** Where the next batch is read; {@code null} while a start is loading the stored offset. */
	private @Nullable ProjectionSource source;

	private TagOffset offset = TagOffset.START;

	/** The batch in flight, from its poll until its offset is stored; {@code null} between batches. */
	private @Nullable CompletableFuture<Void> batch;

	/** The events of the batch in flight, once read. */
	private @Nullable Lanes batchLanes;

	/**
	 * The load of the latest start (its offset, which for a fenced cursor is a fence write), until it ends: a reset
	 * waits for it, so that its own cursor write neither precedes the fence nor races it. It completes only when no
	 * load of that start is in flight or scheduled again (a load after an unavailable store is sent later).
	 */
	private CompletableFuture<Void> loading = CompletableFuture.completedFuture(null);

	/** A load of the offset scheduled again after the store was unavailable, until it is sent or cancelled. */
	private @Nullable ScheduledFuture<?> loadRetry;

	/** What {@link #loadRetry} settles: the {@link #loading} of its start, completed when a stop cancels it. */
	private @Nullable CompletableFuture<Void> loadRetrySettles;

	/** The reset in progress, if any, until its own start has ended: another reset meanwhile is refused. */
	private @Nullable CompletableFuture<Void> resetting;

	/**
	 * The state the reset in progress leaves the projection in (RUNNING, PAUSED or STOPPED), from the reset's
	 * beginning until its own start reads it; {@code null} outside that window. It begins as PAUSED for a paused
	 * projection, RUNNING for a running one, and for a stopped or failed one as the reset's caller asks (RUNNING for
	 * an operator's reset; {@link #reset(TagOffset, ProjectionState)}), and each start, stop, pause or resume
	 * meanwhile changes it as it would change the projection (the reset has the projection stopped then, so the call
	 * has no state of its own to change): the last call wins. A stop is kept too, so that a runner stopped during a reset (a shared segment handed over) is
	 * not started again by it.
	 */
	private @Nullable ProjectionState afterReset;

	/** Whether the runner was stopped for good ({@link #retire()}): nothing starts it again. */
	private boolean retired;

	/** Threads of the lanes when {@code concurrency > 1}: created on start, shut down on stop. */
	private @Nullable ExecutorService lanes;

	private @Nullable ScheduledFuture<?> scheduled;

	/** Whether an append of this process concerned the source while the batch in flight ran: read again at once. */
	private boolean wokenDuringBatch;

	/** Whether a batch's end reads on without waiting for its offset save (not for a shared segment). */
	private final boolean savesBehind;

	/** The newest offset handed to the saves: every event before it was handled. */
	private TagOffset handedOver = TagOffset.START;

	/** Whether a save is in flight. */
	private boolean saving;

	/** The newest offset handed over while a save was in flight: saved when it ends. */
	private @Nullable TagOffset nextSave;

	/** Completes when the save in flight and the one waiting for it have ended; {@code null} when none is. */
	private @Nullable CompletableFuture<Void> savesEnded;

	/** A save that failed since the last batch's end: that end fails with it. */
	private @Nullable Throwable saveFailure;

	/** The latest range a cleanup deleted before a source read it (finding 19), kept across sources. */
	private ProjectionStatus.@Nullable DeletedEvents deleted;

	ProjectionRunner(Projection<E> projection, Function<TagOffset, ProjectionSource> sources, OffsetStore offsets,
			@Nullable DeadLetterQueue deadLetters, Consumer<DeadLetter> deadLetterListener, EventSerializer serializer,
			ProjectionMetrics metrics, RetryScheduler retries, ScheduledExecutorService executor, Clock clock) {
		this(projection, projection.id(), () -> true, sources, offsets, deadLetters, deadLetterListener, serializer,
				metrics, retries, executor, clock, true);
	}

	/**
	 * A runner of one segment of a projection (its own cursor identity), which touches no event and reads no batch
	 * once {@code mayGoOn} turns false (its lease lapsed or was lost).
	 */
	ProjectionRunner(Projection<E> projection, ProjectionId id, BooleanSupplier mayGoOn,
			Function<TagOffset, ProjectionSource> sources, OffsetStore offsets, @Nullable DeadLetterQueue deadLetters,
			Consumer<DeadLetter> deadLetterListener, EventSerializer serializer, ProjectionMetrics metrics,
			RetryScheduler retries, ScheduledExecutorService executor, Clock clock) {
		this(projection, id, mayGoOn, sources, offsets, deadLetters, deadLetterListener, serializer, metrics, retries,
				executor, clock, false);
	}

	private ProjectionRunner(Projection<E> projection, ProjectionId id, BooleanSupplier mayGoOn,
			Function<TagOffset, ProjectionSource> sources, OffsetStore offsets, @Nullable DeadLetterQueue deadLetters,
			Consumer<DeadLetter> deadLetterListener, EventSerializer serializer, ProjectionMetrics metrics,
			RetryScheduler retries, ScheduledExecutorService executor, Clock clock, boolean savesBehind) {
		this.savesBehind = savesBehind;
		this.projection = projection;
		this.id = id;
		this.settings = projection.settings();
		this.sources = sources;
		this.offsets = offsets;
		this.metrics = metrics;
		this.executor = executor;
		this.run = new RunState(metrics, mayGoOn);
		this.failures = new FailureHandling<>(projection, deadLetters, deadLetterListener, serializer, metrics, retries,
				executor, clock, this.run);
		this.lag = new Lag(metrics, clock);
	}

	/**
	 * Limits the dead letters this runner parks and redelivers to its segment's entities (before it starts).
	 * @param which the segment's entities, by persistenceId
	 * @return this runner
	 */
	ProjectionRunner<E> onlyEntities(Predicate<String> which) {
		this.failures.entities(which);
		return this;
	}

	@Override
	public ProjectionId id() {
		return this.id;
	}

	@Override
	public ProjectionStatus status() {
		TagOffset stored;
		synchronized (this) {
			stored = this.offset;
		}
		return new ProjectionStatus(this.id, this.run.state(), stored, this.failures.handled(),
				this.failures.skipped(), this.failures.lastEventTimestamp(), this.lag.lag(), this.lag.lagEvents(),
				this.run.lastError(), this.failures.lastHandled(), deletedEvents());
	}

	private synchronized ProjectionStatus.@Nullable DeletedEvents deletedEvents() {
		return this.deleted;
	}

	/** After a poll: one INFO line for each new range a cleanup deleted before the source read it. */
	private void noteDeleted(ProjectionSource current) {
		ProjectionStatus.DeletedEvents found = current.deleted();
		if (found != null && !found.equals(this.deleted)) {
			this.deleted = found;
			logger.info("Projection '{}' ({}): {} (docs/reliability.md, finding 19)", this.id.name(), this.id.key(),
					found.describe());
		}
	}

	/** @return the batch in flight and then the saves it handed over, or a completed stage when neither runs */
	private synchronized CompletableFuture<Void> inFlight() {
		CompletableFuture<Void> current = (this.batch != null) ? this.batch : CompletableFuture.completedFuture(null);
		return current.thenCompose((ignored) -> savesEnded());
	}

	private synchronized CompletableFuture<Void> savesEnded() {
		return (this.savesEnded != null) ? this.savesEnded : CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletionStage<Void> start() {
		return startNow(false);
	}

	/**
	 * Marks the projection RUNNING at once, then, once the batch in flight (if any) has ended, loads the
	 * offset and the parked entities, creates the source and schedules the first poll. A stop in between
	 * cancels it (the generation changes); a pause does not (the load still sets up the source, which the resume
	 * reads from).
	 * A start while a reset runs, before the reset's own start, is recorded for that start ({@link #afterReset})
	 * and waits for the reset, decided in the same locked step as the start: checked before that step, a reset
	 * could begin in between, and the start's load (for a fenced cursor, a fence) race the reset's cursor write,
	 * or its start take the reset's place and drop a call sent during the reset.
	 * @param forReset whether this is the reset's own start: in the state the calls during the reset asked for
	 * (PAUSED: the offset is loaded, no batch read; STOPPED: not started)
	 */
	private CompletionStage<Void> startNow(boolean forReset) {
		long started;
		CompletableFuture<Void> previous;
		CompletableFuture<Void> loading;
		synchronized (this) {
			if (this.retired) {
				return CompletableFuture.completedFuture(null);
			}
			ProjectionState asked = this.afterReset;
			if (forReset) {
				this.afterReset = null;
				if (asked == ProjectionState.STOPPED) {
					return CompletableFuture.completedFuture(null);
				}
			}
			else if (asked != null && this.resetting != null) {
				// As a start of a stopped or paused projection would: RUNNING.
				this.afterReset = ProjectionState.RUNNING;
				return this.resetting.copy();
			}
			started = this.run.start();
			if (started < 0) {
				return CompletableFuture.completedFuture(null);
			}
			if (forReset && asked == ProjectionState.PAUSED) {
				this.run.pause();
			}
			this.source = null;
			cancelScheduled();
			if (this.settings.concurrency() > 1 && this.lanes == null) {
				this.lanes = lanePool();
			}
			previous = inFlight();
			// Published before the load is sent, in the same step as the start: a reset from another thread must
			// never see the previous start's (ended) load while this one's fence is in flight, or its cursor write
			// precedes the fence (refused, and the segment's term ended with it; docs/reliability.md, finding 29).
			loading = new CompletableFuture<>();
			this.loading = loading;
		}
		CompletionStage<Void> firstAttempt = previous.thenCompose((ignored) -> loadOffset(started, loading));
		// A load attempt never fails (it settles itself); only a failed wait for the batch before it could.
		firstAttempt.whenComplete((ok, error) -> {
			if (error != null) {
				loading.complete(null);
			}
		});
		return firstAttempt;
	}

	/** @return completes (never exceptionally) once the latest start's load has ended */
	private synchronized CompletableFuture<Void> loadEnded() {
		return this.loading.handle((ok, error) -> null);
	}

	/**
	 * Loads the offset and the parked entities, then creates the source and schedules the first poll. A store
	 * that is unavailable for a moment (no node, a read timeout) is read again after the poll interval, as a
	 * failed poll is; only another error fails the projection (docs/reliability.md, finding 8: one failed read at
	 * start used to leave it FAILED for good).
	 * @param settled completed once no load of this start is in flight or scheduled: a reset waits for it
	 * @return completes when this attempt has ended (a load scheduled again does not delay it)
	 */
	private CompletionStage<Void> loadOffset(long started, CompletableFuture<Void> settled) {
		CompletionStage<Optional<TagOffset>> loaded;
		try {
			loaded = this.offsets.load(this.id);
		}
		catch (RuntimeException ex) {
			loaded = CompletableFuture.failedFuture(ex);
		}
		return loaded
			.thenCompose((stored) -> this.failures.loadParked().thenApply((ignored) -> stored.orElse(TagOffset.START)))
			.thenAccept((from) -> {
				synchronized (this) {
					// Not current(started): a pause meanwhile keeps the generation, and its resume needs the source.
					if (!this.run.isGeneration(started)) {
						return;
					}
					this.offset = from;
					this.handedOver = from;
					this.saveFailure = null;
					this.lag.restarted();
					this.source = this.sources.apply(from);
					schedule(0);
				}
			})
			.handle((ok, error) -> {
				if (error == null || !loadAgainLater(started, Errors.unwrap(error), settled)) {
					settled.complete(null);
				}
				return null;
			});
	}

	/**
	 * @return whether the load is scheduled again (the store was unavailable and the start is still current), in
	 * which case {@code settled} is left to that load
	 */
	private boolean loadAgainLater(long started, Throwable cause, CompletableFuture<Void> settled) {
		if (!this.run.isGeneration(started)) {
			return false;
		}
		if (!(cause instanceof io.cassandrajournal.JournalUnavailableException)) {
			this.failures.fail("could not load its offset", cause, null);
			return false;
		}
		String lastError = "could not load its offset: " + cause;
		this.run.lastError(lastError);
		logger.warn("Projection {} {}; reading it again in {}", this.id, lastError, this.settings.pollInterval());
		synchronized (this) {
			if (!this.run.isGeneration(started)) {
				return false;
			}
			try {
				this.loadRetry = this.executor.schedule(() -> loadAgain(started, settled),
						this.settings.pollInterval().toMillis(), TimeUnit.MILLISECONDS);
				this.loadRetrySettles = settled;
				return true;
			}
			catch (java.util.concurrent.RejectedExecutionException closed) {
				// The engine is closing: nothing more to start.
				return false;
			}
		}
	}

	/**
	 * Sends a load scheduled again, unless its start was stopped meanwhile (checked under the lock that a stop
	 * takes): a stopped start's load, sent late, is a fence that races the cursor write of a reset (finding 29).
	 */
	private void loadAgain(long started, CompletableFuture<Void> settled) {
		synchronized (this) {
			if (this.loadRetrySettles == settled) {
				this.loadRetry = null;
				this.loadRetrySettles = null;
			}
			if (!this.run.isGeneration(started)) {
				settled.complete(null);
				return;
			}
		}
		loadOffset(started, settled);
	}

	/** Cancels a load scheduled again and settles it: the stop that calls this ended its start. */
	private synchronized void cancelLoadRetry() {
		if (this.loadRetry != null) {
			this.loadRetry.cancel(false);
			this.loadRetry = null;
		}
		if (this.loadRetrySettles != null) {
			this.loadRetrySettles.complete(null);
			this.loadRetrySettles = null;
		}
	}

	private ExecutorService lanePool() {
		AtomicInteger count = new AtomicInteger();
		return Executors.newFixedThreadPool(this.settings.concurrency(), (task) -> {
			Thread thread = new Thread(task, "projection-" + this.id.name() + "-lane-" + count.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
	}

	@Override
	public CompletionStage<Void> stop() {
		return stopNow(false);
	}

	/**
	 * Stops for good: the segment's term ended or it is being handed over. A reset in progress still stores its
	 * offset (while the term lets it) but does not start this runner again, and neither does a start; the next
	 * term makes a new runner.
	 */
	@Override
	public CompletionStage<Void> retire() {
		synchronized (this) {
			this.retired = true;
		}
		return stop();
	}

	/**
	 * @param forReset whether this is the reset's own stop: not recorded as a call that decides the state the
	 * reset leaves the projection in ({@link #afterReset}), which any other stop during the reset is
	 */
	private CompletionStage<Void> stopNow(boolean forReset) {
		CompletableFuture<Void> done;
		ExecutorService lanePool;
		synchronized (this) {
			if (!forReset && this.afterReset != null) {
				this.afterReset = ProjectionState.STOPPED;
			}
			this.run.stop();
			cancelScheduled();
			cancelLoadRetry();
			done = inFlight();
			lanePool = this.lanes;
			this.lanes = null;
		}
		if (lanePool != null) {
			done.whenComplete((ok, error) -> lanePool.shutdown());
		}
		return done.copy();
	}

	@Override
	public synchronized void pause() {
		if (this.afterReset == ProjectionState.RUNNING) {
			this.afterReset = ProjectionState.PAUSED;
		}
		if (this.run.pause()) {
			cancelScheduled();
		}
	}

	@Override
	public synchronized void resume() {
		if (this.afterReset == ProjectionState.PAUSED) {
			this.afterReset = ProjectionState.RUNNING;
		}
		if (this.run.resume()) {
			schedule(0);
		}
	}

	@Override
	public CompletionStage<Void> reset(TagOffset to) {
		return reset(to, ProjectionState.RUNNING);
	}

	/**
	 * Resets the projection as {@link #reset(TagOffset)} does, with a say in what it leaves a projection it finds
	 * not running. A reset leaves a RUNNING (or FAILING) projection running and a PAUSED one paused; one it finds
	 * STOPPED or FAILED it leaves in {@code ifStopped}: RUNNING for an operator's reset of a projection (the reset
	 * starts it), STOPPED or PAUSED for a fan-out entity whose segment was stopped or is paused
	 * ({@link FanOutSegment}), so that the reset leaves it as its segment is. A start, stop, pause or resume during
	 * the reset still decides instead (the last call wins, {@link #afterReset}).
	 * @param to the offset to resume from
	 * @param ifStopped RUNNING, PAUSED or STOPPED
	 * @return completes once the offset is stored and the projection is in that state
	 */
	CompletionStage<Void> reset(TagOffset to, ProjectionState ifStopped) {
		if (ifStopped != ProjectionState.RUNNING && ifStopped != ProjectionState.PAUSED
				&& ifStopped != ProjectionState.STOPPED) {
			throw new IllegalArgumentException("a reset leaves a projection RUNNING, PAUSED or STOPPED, not " + ifStopped);
		}
		String invalid = invalidOffset(to);
		if (invalid != null) {
			return CompletableFuture.failedFuture(new IllegalArgumentException(invalid));
		}
		CompletableFuture<Void> done = new CompletableFuture<>();
		synchronized (this) {
			if (this.resetting != null) {
				return CompletableFuture.failedFuture(
						new ResetInProgressException("projection " + this.id + " is being reset already"));
			}
			this.resetting = done;
			ProjectionState found = this.run.state();
			this.afterReset = (found == ProjectionState.PAUSED) ? ProjectionState.PAUSED
					: RunState.active(found) ? ProjectionState.RUNNING : ifStopped;
		}
		// A start's load still in flight (a fenced cursor's fence) ends before the reset writes the cursor.
		stopNow(true).thenCompose((ignored) -> loadEnded()).thenCompose((ignored) -> this.offsets.reset(this.id, to))
			.thenCompose((ignored) -> {
					this.run.stopped();
					// A paused projection stays paused: the reset stores the offset, the resume reads from it. A
					// start, stop, pause or resume that came while the reset had it stopped decides instead (the
					// last one wins): read in the start's own locked step, so that no call falls between the read
					// and the start.
					return startNow(true);
				}).whenComplete((ok, error) -> {
					synchronized (this) {
						this.resetting = null;
						this.afterReset = null;
					}
					if (error != null) {
						done.completeExceptionally(Errors.unwrap(error));
					}
					else {
						done.complete(null);
					}
				});
		return done.copy();
	}

	/**
	 * @param to an offset an operator asked to resume from
	 * @return why this projection's source cannot resume from it, or {@code null} if it can
	 */
	private @Nullable String invalidOffset(TagOffset to) {
		if (to.timestamp() < 0 || to.sequenceNr() < 0) {
			return "projection '" + this.id.name() + "' cannot resume from " + to
					+ ": time stamp and sequence number must not be negative";
		}
		String persistenceId = this.projection.persistenceId();
		if (persistenceId == null) {
			return null;
		}
		if (to.sequenceNr() == Long.MAX_VALUE) {
			return "projection '" + this.id.name() + "' reads the events of " + persistenceId
					+ " by sequence number and cannot resume after sequence number " + Long.MAX_VALUE
					+ " (a time stamp does not apply to it: reset it to a sequence number)";
		}
		if (!to.persistenceId().isEmpty() && !to.persistenceId().equals(persistenceId)) {
			return "projection '" + this.id.name() + "' reads the events of " + persistenceId + ", not of "
					+ to.persistenceId();
		}
		return null;
	}

	@Override
	public void skipCurrent() {
		RunState.Skip skip = this.run.skip();
		if (skip == null) {
			return;
		}
		this.failures.requestSkip(skip.key());
		if (skip.restart()) {
			start();
		}
	}

	@Override
	public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
		return this.failures.deadLetters(limit);
	}

	@Override
	public CompletionStage<Integer> redeliverDeadLetters() {
		return this.failures.redeliver();
	}

	/**
	 * @param result an append of this process
	 */
	@Override
	public synchronized void wake(AppendResult result) {
		if (this.run.active() && this.source != null && this.source.concerns(result)) {
			if (this.batch != null) {
				// The batch may have read before the append landed; its end reads again at once.
				this.wokenDuringBatch = true;
			}
			else {
				schedule(0);
			}
		}
	}

	/** Schedules the next batch, unless one is in flight (its end schedules) or the projection is not active. */
	private synchronized void schedule(long delayMillis) {
		if (!this.run.active() || this.batch != null || this.source == null) {
			return;
		}
		cancelScheduled();
		this.scheduled = this.executor.schedule(this::tick, delayMillis, TimeUnit.MILLISECONDS);
	}

	private synchronized void cancelScheduled() {
		if (this.scheduled != null) {
			this.scheduled.cancel(false);
			this.scheduled = null;
		}
	}

	private void tick() {
		ProjectionSource current;
		CompletableFuture<Void> inFlight;
		ExecutorService lanePool;
		synchronized (this) {
			if (!this.run.mayRead() || this.batch != null || this.source == null) {
				return;
			}
			current = this.source;
			inFlight = new CompletableFuture<>();
			this.batch = inFlight;
			this.batchLanes = null;
			this.wokenDuringBatch = false;
			this.run.batchStarted();
			lanePool = this.lanes;
		}
		CompletionStage<ProjectionSource.Batch> polled;
		try {
			polled = current.poll();
		}
		catch (RuntimeException ex) {
			polled = CompletableFuture.failedFuture(ex);
		}
		polled.thenComposeAsync((read) -> handle(read, lanePool).thenApply((ignored) -> read), this.executor)
			.handle((read, error) -> {
				Throwable cause = (error != null) ? Errors.unwrap(error) : null;
				if (this.savesBehind) {
					Throwable saveError = handOver(current);
					afterTick(current, inFlight, read, (cause != null) ? cause : saveError);
					return null;
				}
				return saveOffset(current).handle((saved, saveError) -> {
					afterTick(current, inFlight, read,
							(cause != null) ? cause : (saveError != null) ? Errors.unwrap(saveError) : null);
					return null;
				});
			});
	}

	/**
	 * Hands the offset after the batch's handled prefix to the saves: saved at once when no save is in flight,
	 * else after it (coalesced with anything handed over meanwhile).
	 * @return a save that failed since the last batch's end (this batch's own, when it failed at once), or
	 * {@code null}
	 */
	private @Nullable Throwable handOver(ProjectionSource current) {
		TagOffset next;
		try {
			next = current.offsetAfter(handledInBatch());
		}
		catch (RuntimeException ex) {
			return ex;
		}
		boolean start = false;
		synchronized (this) {
			if (this.saveFailure == null && !next.equals(this.handedOver)) {
				this.handedOver = next;
				if (this.saving) {
					this.nextSave = next;
				}
				else {
					this.saving = true;
					this.savesEnded = new CompletableFuture<>();
					start = true;
				}
			}
		}
		if (start) {
			startSave(next);
		}
		synchronized (this) {
			Throwable failed = this.saveFailure;
			this.saveFailure = null;
			return failed;
		}
	}

	private void startSave(TagOffset next) {
		long started = System.nanoTime();
		CompletionStage<Void> saved;
		try {
			saved = this.offsets.save(this.id, next);
		}
		catch (RuntimeException ex) {
			saved = CompletableFuture.failedFuture(ex);
		}
		saved.whenComplete((ok, error) -> saveEnded(next, started, error));
	}

	/** A save ended: the next one waiting starts, or the saves are idle. A failure drops what waits. */
	private void saveEnded(TagOffset saved, long started, @Nullable Throwable error) {
		TagOffset following;
		CompletableFuture<Void> ended = null;
		synchronized (this) {
			if (error == null) {
				this.offset = saved;
			}
			else {
				// Reading starts again from the stored offset (afterTick): nothing newer is saved before that.
				this.saveFailure = Errors.unwrap(error);
				this.handedOver = this.offset;
				this.nextSave = null;
				// Told here too: after the last batch (a stop, a pause, a failed projection) no batch reports it.
				String lastError = "storing the offset failed: " + this.saveFailure;
				this.run.lastError(lastError);
				logger.warn("Projection {}: {}; the stored offset stays {}", this.id, lastError, this.offset);
			}
			following = this.nextSave;
			this.nextSave = null;
			if (following == null) {
				this.saving = false;
				ended = this.savesEnded;
				this.savesEnded = null;
			}
		}
		if (error == null) {
			this.metrics.offsetSaved(Duration.ofNanos(System.nanoTime() - started));
		}
		if (following != null) {
			startSave(following);
		}
		else if (ended != null) {
			ended.complete(null);
		}
	}

	private CompletionStage<Void> handle(ProjectionSource.Batch read, @Nullable ExecutorService lanePool) {
		Lanes batchLanes = new Lanes(read.events(), this.failures::handle, this.run::batchGoesOn);
		synchronized (this) {
			this.batchLanes = batchLanes;
		}
		boolean inLanes = lanePool != null && read.events().size() > 1;
		Executor continueOn = inLanes ? lanePool : this.executor;
		return batchLanes.run(inLanes ? this.settings.concurrency() : 1, continueOn);
	}

	/** @return how many events at the start of the batch in flight are handled */
	private synchronized int handledInBatch() {
		return (this.batchLanes != null) ? this.batchLanes.handled() : 0;
	}

	private CompletionStage<Void> saveOffset(ProjectionSource current) {
		TagOffset next;
		CompletionStage<Void> saved;
		long started = System.nanoTime();
		try {
			next = current.offsetAfter(handledInBatch());
			synchronized (this) {
				if (next.equals(this.offset)) {
					return CompletableFuture.completedFuture(null);
				}
			}
			saved = this.offsets.save(this.id, next);
		}
		catch (RuntimeException ex) {
			// Thrown instead of returned as a failed stage: still a failed batch, never a stuck one.
			return CompletableFuture.failedFuture(ex);
		}
		return saved.thenRun(() -> {
			synchronized (this) {
				this.offset = next;
			}
			this.metrics.offsetSaved(Duration.ofNanos(System.nanoTime() - started));
		});
	}

	/**
	 * Ends the batch in flight: after a failure other than a stop, the source has already moved past the
	 * batch (and its unhandled tail), so reading starts again from the stored offset; whenever the projection
	 * is active, the next batch is scheduled.
	 */
	private void afterTick(ProjectionSource current, CompletableFuture<Void> inFlight,
			ProjectionSource.@Nullable Batch read, @Nullable Throwable error) {
		try {
			synchronized (this) {
				int handled = handledInBatch();
				this.batch = null;
				this.batchLanes = null;
				this.run.batchEnded();
				long next = -1;
				if (error instanceof FailureHandling.StopProjection) {
					// Stopped by a failure or a stop; a start meanwhile waited for this batch and schedules itself.
					next = 0;
				}
				else if (error != null) {
					String lastError = "reading, dead-lettering or storing the offset failed: " + error;
					this.run.lastError(lastError);
					logger.warn("Projection {}: {}; reading again from its stored offset in {}", this.id, lastError,
							this.settings.pollInterval());
					if (this.source == current) {
						// Saving behind: every event before the offset handed over was handled, whether or not its
						// save has landed yet (a failed save set it back to the stored offset).
						this.source = this.sources.apply(this.savesBehind ? this.handedOver : this.offset);
						// A save failure is answered by this rebuild (a failed save set handedOver back to the
						// stored offset): the next batch must not rebuild again for it.
						this.saveFailure = null;
						this.lag.restarted();
					}
					next = this.settings.pollInterval().toMillis();
				}
				else if (this.run.active() && read != null) {
					noteDeleted(current);
					this.lag.batchEnded(read.events(), read.caughtUp(), handled, this.failures.lastEventTimestamp(),
							this.offset, this.source);
					next = (read.caughtUp() && !this.wokenDuringBatch) ? this.settings.pollInterval().toMillis() : 0;
				}
				if (next >= 0) {
					schedule(next);
				}
			}
		}
		finally {
			inFlight.complete(null);
		}
	}

}
