package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.RawEvents;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * Runs one projection: load the offset, poll the source, hand each event to the handler in order, store
 * the offset after the batch, repeat; failures go through the recovery strategy. One batch at a time; the
 * handler runs on the engine's executor, never on a driver thread.
 * <p>
 * The batch in flight is one lock-guarded future ({@code batch}): {@link #stop()} returns it (and so does
 * the stop inside {@link #reset}), {@link #start()} waits for it before loading the offset, and its end
 * schedules the next batch whenever the projection is active, so RUNNING always has a batch in flight or
 * scheduled. After any failed batch other than a stop, the source is created again from the stored offset.
 *
 * @param <E> the payload type
 */
final class ProjectionRunner<E> implements ProjectionControl {

	private static final Logger logger = LoggerFactory.getLogger(ProjectionRunner.class);

	private final Projection<E> projection;

	private final ProjectionId id;

	private final ProjectionSettings settings;

	private final Function<TagOffset, ProjectionSource> sources;

	private final OffsetStore offsets;

	private final @Nullable DeadLetterQueue deadLetters;

	private final Consumer<DeadLetter> deadLetterListener;

	private final EventSerializer serializer;

	private final ProjectionMetrics metrics;

	private final RetryScheduler retries;

	private final ScheduledExecutorService executor;

	private final Clock clock;

	private final Set<String> parked = ConcurrentHashMap.newKeySet();

	private volatile ProjectionState state = ProjectionState.STOPPED;

	/**
	 * Where the next batch is read; {@code null} while a start is loading the stored offset. Written under
	 * the lock.
	 */
	private volatile @Nullable ProjectionSource source;

	/**
	 * The batch in flight, from its poll until its offset is stored; {@code null} between batches. Guarded
	 * by the lock. At most one batch runs; {@link #stop()} returns it, {@link #start()} waits for it, and its
	 * end schedules the next one whenever the projection is active.
	 */
	private @Nullable CompletableFuture<Void> batch;

	/** Bumped by every start and stop: a batch or a start begun under another generation is stale. */
	private volatile long generation;

	/** The generation the batch in flight was started under. */
	private volatile long batchGeneration;

	/** The reset in progress, if any: a start meanwhile waits for it. Guarded by the lock. */
	private @Nullable CompletableFuture<Void> resetting;

	/**
	 * Events of the batch in flight whose last attempt failed and that are not settled yet (retrying, or
	 * abandoned by a stop), in the order they first failed. Guarded by the lock. The projection is FAILING
	 * while one is retrying; the failure series ends when the last one settles.
	 */
	private final Map<String, PersistentEvent<String>> failing = new LinkedHashMap<>();

	/** The event a FAILED projection stopped at. Guarded by the lock. */
	private @Nullable PersistentEvent<String> stoppedAt;

	/** Whether a failure series is open (its start was logged, its end was not). Written under the lock. */
	private volatile boolean failureSeries;

	private volatile TagOffset offset = TagOffset.START;

	private final AtomicLong handled = new AtomicLong();

	private final AtomicLong skipped = new AtomicLong();

	private volatile long lagEvents;

	/** The last event of the last batch's handled prefix. */
	private @Nullable TagOffset handledUpTo;

	private long lagCountedAt;

	private boolean lagCounting;

	/** Threads of the lanes when {@code concurrency > 1}: created on start, shut down on stop. */
	private @Nullable ExecutorService lanes;

	private volatile @Nullable Instant lastEventTimestamp;

	private volatile Duration lag = Duration.ZERO;

	private volatile @Nullable String lastError;

	private volatile @Nullable String skipRequested;

	private volatile int handledInBatch;

	private @Nullable ScheduledFuture<?> scheduled;

	public ProjectionRunner(Projection<E> projection, Function<TagOffset, ProjectionSource> sources, OffsetStore offsets,
			@Nullable DeadLetterQueue deadLetters, Consumer<DeadLetter> deadLetterListener, EventSerializer serializer,
			ProjectionMetrics metrics, RetryScheduler retries, ScheduledExecutorService executor, Clock clock) {
		this.projection = projection;
		this.id = projection.id();
		this.settings = projection.settings();
		this.sources = sources;
		this.offsets = offsets;
		this.deadLetters = deadLetters;
		this.deadLetterListener = deadLetterListener;
		this.serializer = serializer;
		this.metrics = metrics;
		this.retries = retries;
		this.executor = executor;
		this.clock = clock;
	}

	@Override
	public ProjectionId id() {
		return this.id;
	}

	@Override
	public ProjectionStatus status() {
		return new ProjectionStatus(this.id, this.state, this.offset, this.handled.get(), this.skipped.get(),
				this.lastEventTimestamp, this.lag, this.lagEvents, this.lastError);
	}

	private static boolean active(ProjectionState state) {
		return state == ProjectionState.RUNNING || state == ProjectionState.FAILING;
	}

	/** @return the batch in flight, or a completed stage between batches */
	private synchronized CompletableFuture<Void> inFlight() {
		return (this.batch != null) ? this.batch : CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletionStage<Void> start() {
		synchronized (this) {
			if (this.resetting != null) {
				return this.resetting.copy();
			}
		}
		return startNow();
	}

	/**
	 * Marks the projection RUNNING at once, then, once the batch in flight (if any) has ended, loads the
	 * offset and the parked entities, creates the source and schedules the first poll. A stop in between
	 * cancels it (the generation changes).
	 */
	private CompletionStage<Void> startNow() {
		long started;
		CompletableFuture<Void> previous;
		synchronized (this) {
			if (active(this.state)) {
				return CompletableFuture.completedFuture(null);
			}
			this.state = ProjectionState.RUNNING;
			started = ++this.generation;
			this.source = null;
			this.stoppedAt = null;
			cancelScheduled();
			if (this.settings.concurrency() > 1 && this.lanes == null) {
				AtomicInteger count = new AtomicInteger();
				this.lanes = Executors.newFixedThreadPool(this.settings.concurrency(), (task) -> {
					Thread thread = new Thread(task, "projection-" + this.id.name() + "-lane-" + count.incrementAndGet());
					thread.setDaemon(true);
					return thread;
				});
			}
			previous = inFlight();
		}
		this.metrics.stalled(false);
		return previous.thenCompose((ignored) -> this.offsets.load(this.id))
			.thenCompose((stored) -> loadParked().thenApply((ignored) -> stored.orElse(TagOffset.START)))
			.thenAccept((from) -> {
				synchronized (this) {
					if (this.generation != started || !active(this.state)) {
						return;
					}
					this.offset = from;
					this.handledUpTo = null;
					this.source = this.sources.apply(from);
					schedule(0);
				}
			})
			.exceptionally((error) -> {
				if (this.generation == started) {
					fail("could not load its offset", Errors.unwrap(error), null);
				}
				return null;
			});
	}

	private CompletionStage<Void> loadParked() {
		if (!this.settings.parkAfterDeadLetter() || this.deadLetters == null) {
			return CompletableFuture.completedFuture(null);
		}
		return this.deadLetters.list(this.id.name(), 100_000).thenAccept((letters) -> {
			this.parked.clear();
			letters.forEach((letter) -> this.parked.add(letter.event().persistenceId()));
		});
	}

	@Override
	public CompletionStage<Void> stop() {
		CompletableFuture<Void> done;
		ExecutorService lanePool;
		synchronized (this) {
			if (this.state != ProjectionState.FAILED) {
				this.state = ProjectionState.STOPPED;
			}
			this.generation++;
			cancelScheduled();
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
	public void pause() {
		synchronized (this) {
			if (active(this.state)) {
				this.state = ProjectionState.PAUSED;
				cancelScheduled();
			}
		}
	}

	@Override
	public void resume() {
		synchronized (this) {
			if (this.state != ProjectionState.PAUSED) {
				return;
			}
			this.state = this.failing.isEmpty() ? ProjectionState.RUNNING : ProjectionState.FAILING;
			schedule(0);
		}
	}

	@Override
	public CompletionStage<Void> reset(TagOffset to) {
		String invalid = invalidOffset(to);
		if (invalid != null) {
			return CompletableFuture.failedFuture(new IllegalArgumentException(invalid));
		}
		CompletableFuture<Void> done = new CompletableFuture<>();
		synchronized (this) {
			if (this.resetting != null) {
				return CompletableFuture.failedFuture(
						new IllegalStateException("projection " + this.id + " is being reset already"));
			}
			this.resetting = done;
		}
		stop().thenCompose((ignored) -> TagOffset.START.equals(to) ? this.offsets.delete(this.id)
				: this.offsets.save(this.id, to)).thenCompose((ignored) -> {
					synchronized (this) {
						this.state = ProjectionState.STOPPED;
					}
					return startNow();
				}).whenComplete((ok, error) -> {
					synchronized (this) {
						this.resetting = null;
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
		boolean restart;
		synchronized (this) {
			PersistentEvent<String> target = (this.state == ProjectionState.FAILED) ? this.stoppedAt
					: this.failing.values().stream().findFirst().orElse(null);
			if (target == null) {
				return;
			}
			this.skipRequested = key(target);
			restart = this.state == ProjectionState.FAILED;
			if (restart) {
				this.state = ProjectionState.STOPPED;
			}
		}
		if (restart) {
			start();
		}
	}

	@Override
	public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
		return (this.deadLetters != null) ? this.deadLetters.list(this.id.name(), limit)
				: CompletableFuture.completedFuture(List.of());
	}

	@Override
	public CompletionStage<Integer> redeliverDeadLetters() {
		if (this.deadLetters == null) {
			return CompletableFuture.completedFuture(0);
		}
		return this.deadLetters.list(this.id.name(), 10_000)
			.thenComposeAsync((letters) -> redeliver(letters, 0, 0), this.executor)
			.thenCompose((count) -> loadParked().thenApply((ignored) -> count));
	}

	private CompletionStage<Integer> redeliver(List<DeadLetter> letters, int index, int count) {
		if (index == letters.size()) {
			return CompletableFuture.completedFuture(count);
		}
		DeadLetter letter = letters.get(index);
		return invoke(letter.event()).handle((ok, error) -> error).thenComposeAsync((error) -> {
			if (error != null) {
				logger.warn("Projection {}: redelivery of {}#{} failed again: {}", this.id, letter.event().persistenceId(),
						letter.event().sequenceNr(), Errors.unwrap(error).toString());
				return redeliver(letters, index + 1, count);
			}
			return this.deadLetters.remove(letter)
				.thenComposeAsync((ignored) -> redeliver(letters, index + 1, count + 1), this.executor);
		}, this.executor);
	}

	/**
	 * @param result an append of this process
	 */
	public void wake(AppendResult result) {
		ProjectionSource current = this.source;
		if (active(this.state) && current != null && current.concerns(result)) {
			schedule(0);
		}
	}

	/** Schedules the next batch, unless one is in flight (its end schedules) or the projection is not active. */
	private synchronized void schedule(long delayMillis) {
		if (!active(this.state) || this.batch != null || this.source == null) {
			return;
		}
		cancelScheduled();
		this.scheduled = this.executor.schedule(this::tick, delayMillis, TimeUnit.MILLISECONDS);
	}

	private void cancelScheduled() {
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
			if (!active(this.state) || this.batch != null || this.source == null) {
				return;
			}
			current = this.source;
			inFlight = new CompletableFuture<>();
			this.batch = inFlight;
			this.batchGeneration = this.generation;
			this.handledInBatch = 0;
			lanePool = this.lanes;
		}
		CompletionStage<ProjectionSource.Batch> polled;
		try {
			polled = current.poll();
		}
		catch (RuntimeException ex) {
			polled = CompletableFuture.failedFuture(ex);
		}
		polled.thenComposeAsync((batch) -> ((lanePool != null && batch.events().size() > 1)
				? handleInLanes(batch.events(), lanePool) : handleFrom(batch.events(), 0))
			.thenApply((ignored) -> batch), this.executor)
			.handle((batch, error) -> {
				Throwable cause = (error != null) ? Errors.unwrap(error) : null;
				return saveOffset(current).handle((saved, saveError) -> {
					afterTick(current, inFlight, batch,
							(cause != null) ? cause : (saveError != null) ? Errors.unwrap(saveError) : null);
					return null;
				});
			});
	}

	/** @return whether the batch in flight may go on with its next event or retry */
	private boolean batchGoesOn() {
		ProjectionState now = this.state;
		return now != ProjectionState.STOPPED && now != ProjectionState.FAILED && this.generation == this.batchGeneration;
	}

	private CompletionStage<Void> saveOffset(ProjectionSource current) {
		TagOffset next;
		CompletionStage<Void> saved;
		long started = System.nanoTime();
		try {
			next = current.offsetAfter(this.handledInBatch);
			if (next.equals(this.offset)) {
				return CompletableFuture.completedFuture(null);
			}
			saved = this.offsets.save(this.id, next);
		}
		catch (RuntimeException ex) {
			// Thrown instead of returned as a failed stage: still a failed batch, never a stuck one.
			return CompletableFuture.failedFuture(ex);
		}
		return saved.thenRun(() -> {
			this.offset = next;
			this.metrics.offsetSaved(Duration.ofNanos(System.nanoTime() - started));
		});
	}

	/**
	 * Ends the batch in flight: after a failure other than a stop, the source has already moved past the
	 * batch (and its unhandled tail), so reading starts again from the stored offset; whenever the projection
	 * is active, the next batch is scheduled.
	 */
	private void afterTick(ProjectionSource current, CompletableFuture<Void> inFlight,
			ProjectionSource.@Nullable Batch batch, @Nullable Throwable error) {
		try {
			synchronized (this) {
				this.batch = null;
				// What still counts as failing was abandoned with the batch; the next batch delivers it again.
				this.failing.clear();
				if (this.state == ProjectionState.FAILING) {
					this.state = ProjectionState.RUNNING;
				}
				this.metrics.stalled(this.state == ProjectionState.FAILED);
				long next = -1;
				if (error instanceof StopProjection) {
					// Stopped by a failure or a stop; a start meanwhile waited for this batch and schedules itself.
					next = 0;
				}
				else if (error != null) {
					this.lastError = "reading, dead-lettering or storing the offset failed: " + error;
					logger.warn("Projection {}: {}; reading again from its stored offset in {}", this.id, this.lastError,
							this.settings.pollInterval());
					if (this.source == current) {
						this.source = this.sources.apply(this.offset);
						this.handledUpTo = null;
					}
					next = this.settings.pollInterval().toMillis();
				}
				else if (active(this.state)) {
					next = afterBatch(batch);
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

	/** @return the delay before the next poll */
	private long afterBatch(ProjectionSource.@Nullable Batch batch) {
		boolean more = batch != null && !batch.caughtUp();
		boolean busy = batch != null && !batch.events().isEmpty();
		Instant lastTimestamp = this.lastEventTimestamp;
		// While events keep coming, how old the last handled one was when handled; idle means caught up.
		this.lag = (busy && lastTimestamp != null) ? Duration.between(lastTimestamp, this.clock.instant()) : Duration.ZERO;
		this.metrics.lag(this.lag);
		if (batch != null && this.handledInBatch > 0) {
			PersistentEvent<String> last = batch.events().get(Math.min(this.handledInBatch, batch.events().size()) - 1);
			this.handledUpTo = new TagOffset(last.timestamp().toEpochMilli(), last.persistenceId(), last.sequenceNr());
		}
		countLag(this.source, batch != null && batch.caughtUp() && this.handledInBatch >= batch.events().size());
		return more ? 0 : this.settings.pollInterval().toMillis();
	}

	/** Zero when caught up; otherwise counted again at most every 2 s, off the poll's path. */
	private void countLag(@Nullable ProjectionSource source, boolean caughtUp) {
		if (caughtUp) {
			this.lagEvents = 0;
			this.metrics.lagEvents(0);
			return;
		}
		long now = System.nanoTime();
		if (source == null || this.lagCounting
				|| (this.lagCountedAt != 0 && now - this.lagCountedAt < TimeUnit.SECONDS.toNanos(2))) {
			return;
		}
		this.lagCounting = true;
		this.lagCountedAt = now;
		// From the last event of the handled prefix: the stored offset of a tag feed trails it by the
		// backtrack window and would count events already handled.
		TagOffset from = (this.handledUpTo != null && this.handledUpTo.compareTo(this.offset) > 0) ? this.handledUpTo
				: this.offset;
		source.eventsAfter(from, ProjectionStatus.LAG_COUNT_LIMIT).whenComplete((count, error) -> {
			synchronized (this) {
				this.lagCounting = false;
			}
			if (count != null) {
				this.lagEvents = count;
				this.metrics.lagEvents(count);
			}
		});
	}

	/**
	 * Handles a batch in {@code concurrency} lanes keyed by persistenceId: one entity's events stay in one
	 * lane, in order. {@code handledInBatch} is the length of the batch's prefix whose events are all
	 * handled, so the stored cursor never passes an event another lane has not finished.
	 */
	private CompletionStage<Void> handleInLanes(List<PersistentEvent<String>> events,
			ExecutorService lanePool) {
		int count = this.settings.concurrency();
		List<List<Integer>> byLane = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			byLane.add(new ArrayList<>());
		}
		for (int i = 0; i < events.size(); i++) {
			byLane.get(Math.floorMod(events.get(i).persistenceId().hashCode(), count)).add(i);
		}
		boolean[] done = new boolean[events.size()];
		List<CompletableFuture<Void>> running = new ArrayList<>();
		for (List<Integer> lane : byLane) {
			if (!lane.isEmpty()) {
				running.add(CompletableFuture.supplyAsync(() -> runLane(events, lane, 0, done, lanePool), lanePool)
					.thenCompose((stage) -> stage));
			}
		}
		return CompletableFuture.allOf(running.toArray(CompletableFuture[]::new));
	}

	private CompletionStage<Void> runLane(List<PersistentEvent<String>> events, List<Integer> lane, int position,
			boolean[] done, ExecutorService lanePool) {
		int k = position;
		while (k < lane.size() && batchGoesOn()) {
			int index = lane.get(k);
			CompletableFuture<Void> stage = handleOne(events.get(index)).toCompletableFuture();
			if (stage.isDone() && !stage.isCompletedExceptionally()) {
				markHandled(done, index);
				k++;
				continue;
			}
			int next = k + 1;
			return stage.thenComposeAsync((ignored) -> {
				markHandled(done, index);
				return runLane(events, lane, next, done, lanePool);
			}, lanePool);
		}
		return CompletableFuture.completedFuture(null);
	}

	private void markHandled(boolean[] done, int index) {
		synchronized (done) {
			done[index] = true;
			int prefix = this.handledInBatch;
			while (prefix < done.length && done[prefix]) {
				prefix++;
			}
			this.handledInBatch = prefix;
		}
	}

	private CompletionStage<Void> handleFrom(List<PersistentEvent<String>> events, int index) {
		int i = index;
		while (i < events.size() && batchGoesOn()) {
			CompletableFuture<Void> stage = handleOne(events.get(i)).toCompletableFuture();
			if (stage.isDone() && !stage.isCompletedExceptionally()) {
				// Completed on this (engine) thread: go on without a hop.
				this.handledInBatch = ++i;
				continue;
			}
			int next = i + 1;
			// Completed later, possibly on a driver thread: continue on the engine's executor, since the next
			// handler may block.
			return stage.thenComposeAsync((ignored) -> {
				this.handledInBatch = next;
				return handleFrom(events, next);
			}, this.executor);
		}
		return CompletableFuture.completedFuture(null);
	}

	private CompletionStage<Void> handleOne(PersistentEvent<String> event) {
		if (this.parked.contains(event.persistenceId())) {
			return deadLetter(event, "parked behind an earlier dead letter of " + event.persistenceId());
		}
		return attempt(event, 1);
	}

	private CompletionStage<Void> attempt(PersistentEvent<String> event, int attempt) {
		if (key(event).equals(this.skipRequested)) {
			this.skipRequested = null;
			return deadLetter(event, "skipped by an operator" + ((this.lastError != null) ? " after: " + this.lastError : ""));
		}
		long started = System.nanoTime();
		return invoke(event).handle((ok, error) -> {
			if (error == null) {
				succeeded(event, started);
				return CompletableFuture.<Void>completedFuture(null);
			}
			return failed(event, attempt, Errors.unwrap(error));
		}).thenCompose((stage) -> stage);
	}

	private CompletionStage<Void> invoke(PersistentEvent<String> event) {
		try {
			PersistentEvent<E> typed = RawEvents.deserialize(event, this.serializer, this.projection.payloadType());
			CompletionStage<Void> stage = this.projection.handler().handle(typed);
			return (stage != null) ? stage : CompletableFuture.completedFuture(null);
		}
		catch (Throwable ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private void succeeded(PersistentEvent<String> event, long started) {
		this.handled.incrementAndGet();
		this.metrics.handled(Duration.ofNanos(System.nanoTime() - started));
		this.lastEventTimestamp = event.timestamp();
		settled(event, "handled");
	}

	/**
	 * The event no longer fails. The failure series ends (one log line, FAILING back to RUNNING, the stalled
	 * meter back to 0) only when no other lane's event is still failing.
	 */
	private void settled(PersistentEvent<String> event, String how) {
		if (!this.failureSeries) {
			return;
		}
		synchronized (this) {
			this.failing.remove(key(event));
			if (!this.failing.isEmpty() || !this.failureSeries) {
				return;
			}
			this.failureSeries = false;
			if (this.state == ProjectionState.FAILING) {
				this.state = ProjectionState.RUNNING;
			}
			this.metrics.stalled(this.state == ProjectionState.FAILED);
		}
		logger.error("Projection {}: failure series ended, {}#{} {}", this.id, event.persistenceId(), event.sequenceNr(),
				how);
	}

	private CompletionStage<Void> failed(PersistentEvent<String> event, int attempt, Throwable error) {
		FailureAction action = decide(attempt);
		this.metrics.failure();
		this.lastError = event.persistenceId() + "#" + event.sequenceNr() + ": " + error;
		ProjectionFailure failure = new ProjectionFailure(this.id, event, error, attempt, action);
		try {
			this.settings.onFailure().accept(failure);
		}
		catch (RuntimeException hookError) {
			logger.warn("Projection {}: the onFailure hook threw; ignored", this.id, hookError);
		}
		boolean seriesStarts;
		synchronized (this) {
			this.failing.putIfAbsent(key(event), event);
			seriesStarts = !this.failureSeries;
			this.failureSeries = true;
			if (action == FailureAction.RETRY) {
				if (this.state == ProjectionState.RUNNING) {
					this.state = ProjectionState.FAILING;
				}
				this.metrics.stalled(true);
			}
		}
		if (seriesStarts) {
			logger.error("Projection {}: failure series started at {}#{} ({}, attempt {}, next: {}): {}", this.id,
					event.persistenceId(), event.sequenceNr(), this.settings.recoveryStrategy(), attempt, action,
					error.toString());
		}
		else {
			logger.debug("Projection {}: attempt {} on {}#{} failed, next: {}", this.id, attempt, event.persistenceId(),
					event.sequenceNr(), action, error);
		}
		switch (action) {
			case RETRY:
				return this.retries.after(this.settings.backoff(attempt)).thenComposeAsync((ignored) -> {
					if (!batchGoesOn()) {
						return CompletableFuture.failedFuture(new StopProjection());
					}
					return attempt(event, attempt + 1);
				}, this.executor);
			case SKIP:
				return deadLetter(event, error.toString());
			default:
				fail("stopped at " + event.persistenceId() + "#" + event.sequenceNr(), error, event);
				return CompletableFuture.failedFuture(new StopProjection());
		}
	}

	private FailureAction decide(int attempt) {
		return switch (this.settings.recoveryStrategy()) {
			case FAIL -> FailureAction.STOP;
			case SKIP -> FailureAction.SKIP;
			case RETRY_AND_FAIL -> (attempt <= this.settings.maxRetries()) ? FailureAction.RETRY : FailureAction.STOP;
			case RETRY_AND_SKIP -> (attempt <= this.settings.maxRetries()) ? FailureAction.RETRY : FailureAction.SKIP;
		};
	}

	/** Stops the projection at an event (the first lane to stop names it) or before reading. */
	private void fail(String what, Throwable error, @Nullable PersistentEvent<String> event) {
		synchronized (this) {
			if (this.state == ProjectionState.FAILED) {
				return;
			}
			this.state = ProjectionState.FAILED;
			this.stoppedAt = event;
			this.lastError = what + ": " + error;
		}
		this.metrics.stalled(true);
		logger.error("Projection {} {}; its cursor stays before the event (fix and restart, or skip it): {}", this.id,
				what, error.toString());
	}

	private CompletionStage<Void> deadLetter(PersistentEvent<String> event, String error) {
		this.skipped.incrementAndGet();
		this.metrics.skipped();
		DeadLetter letter = new DeadLetter(this.id, event, error, this.clock.instant());
		try {
			this.deadLetterListener.accept(letter);
		}
		catch (RuntimeException listenerError) {
			logger.warn("Projection {}: a dead-letter listener threw; ignored", this.id, listenerError);
		}
		if (this.settings.parkAfterDeadLetter()) {
			this.parked.add(event.persistenceId());
		}
		logger.warn("Projection {}: {}#{} skipped as a dead letter: {}", this.id, event.persistenceId(),
				event.sequenceNr(), error);
		settled(event, "skipped");
		return (this.deadLetters != null) ? this.deadLetters.add(letter) : CompletableFuture.completedFuture(null);
	}

	private static String key(PersistentEvent<?> event) {
		return event.persistenceId() + "#" + event.sequenceNr();
	}

	/** Ends a tick when the projection stops because of a failure. */
	static final class StopProjection extends CompletionException {

		private static final long serialVersionUID = 1L;

		StopProjection() {
			super("projection stopped", null);
		}

	}

}
