package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.query.TagOffset;

/**
 * Which segments of one shared projection this instance runs, without a coordinator. Every renewal interval,
 * on the engine's renewal thread, each lease held is renewed on its own: the renewals are sent together and none
 * waits for another, at most one per segment is in flight, and each is bounded by the term's validity
 * ({@code leaseTimeout - renewInterval}), so one stuck request (or a slow balancing round) cannot delay the
 * renewal of the other segments past their terms. A refused, failed or timed-out renewal, or a term that lapsed,
 * stops that segment's runner at once. Every renewal interval, on the engine's lease thread: read every
 * segment's lease row (a round that cannot read them stops here, without a heartbeat: others then see this
 * instance silent and take its share rather than leave it to an instance that cannot run it); write this
 * instance's heartbeat and read who is live ({@link MemberTable.Watch}); then, for each segment, compute its
 * owner among the live members by rendezvous
 * hashing ({@link Rendezvous}). A segment this instance should own is taken at once when free or released, and
 * after the lease timeout when its owner fell silent ({@link LeaseWatch}); its cursor is fenced under the new
 * epoch before its runner starts (a shared fan-out's segment has none: each of its entities' runners fences its
 * own cursor as it starts). A take whose fence fails or outlasts the term, or whose runner cannot start, releases
 * the segment, which is taken again after a wait that doubles from the renewal interval up to the lease timeout
 * while its takes keep failing ({@link FailedTakes}). A segment it holds but should not (a member joined) is handed over: its runner
 * stops after the batch in hand and stores the cursor, then the lease is released, so the winner takes it at
 * once. A graceful stop hands over every segment (renewing each until it is released, so the batch in hand
 * finishes under a valid term) and deletes the membership row.
 * <p>
 * All state changes run on the one lease thread, so none of this needs a lock: the renewal thread only sends
 * renewals and updates or ends {@link LeaseTerm}s (thread-safe), and hands a segment to drop to the lease thread.
 */
final class SegmentOwnership {

	private static final Logger logger = LoggerFactory.getLogger(SegmentOwnership.class);

	/** What every shared projection of an engine uses. */
	record Context(ProjectionSharing settings, LeaseTable leases, MemberTable members,
			DurableStateOffsetStore offsets, ScheduledExecutorService thread, ScheduledExecutorService renewals,
			LongSupplier nanoClock, AtomicBoolean frozen) {
	}

	/** Starts a segment's runner under a lease term. */
	@FunctionalInterface
	interface Starter {

		SegmentRunner run(SegmentedProjection.Segment segment, BooleanSupplier mayGoOn, OffsetStore cursor);

	}

	private final String projection;

	private final List<SegmentedProjection.Segment> segments;

	private final Context context;

	private final Starter starter;

	/**
	 * Where a segment whose cursor is absent starts (another number of segments ran before: SegmentLayouts);
	 * {@code null} for segments without a cursor of their own (a shared fan-out's: each entity's runner fences its
	 * own cursor under the term as it starts, {@link FencedCursor#load}).
	 */
	private final @Nullable BiFunction<SegmentedProjection.Segment, DurableStateOffsetStore, CompletionStage<TagOffset>> initial;

	private final String self;

	private final Duration timeout;

	/** How long a term stays valid after the start of its last successful renewal. */
	private final Duration validFor;

	private final MemberTable.Watch members;

	private final Map<SegmentedProjection.Segment, LeaseWatch> watches = new HashMap<>();

	/** Told of every round's lease rows (the status view counts ownerless segments from them). */
	private final BiConsumer<Map<String, Lease>, Long> rowsRead;

	private final Map<SegmentedProjection.Segment, CompletableFuture<Void>> handingOver = new HashMap<>();

	/** The segments whose latest takes could not start them, until one does (on the lease thread only). */
	private final Map<SegmentedProjection.Segment, FailedTakes> failedTakes = new HashMap<>();

	/** The terms whose renewal is in flight (touched by the renewal thread and the driver's threads). */
	private final Set<LeaseTerm> renewing = ConcurrentHashMap.newKeySet();

	private @Nullable ScheduledFuture<?> loop;

	private @Nullable ScheduledFuture<?> renewalLoop;

	private volatile boolean active;

	SegmentOwnership(String projection, List<SegmentedProjection.Segment> segments, Context context, Starter starter,
			@Nullable BiFunction<SegmentedProjection.Segment, DurableStateOffsetStore, CompletionStage<TagOffset>> initial,
			BiConsumer<Map<String, Lease>, Long> rowsRead) {
		this.projection = projection;
		this.rowsRead = rowsRead;
		this.segments = segments;
		this.context = context;
		this.starter = starter;
		this.initial = initial;
		this.self = context.settings().instanceId();
		this.timeout = context.settings().leaseTimeout();
		this.validFor = this.timeout.minus(context.settings().renewInterval());
		this.members = new MemberTable.Watch(this.self, this.timeout);
	}

	CompletionStage<Void> start() {
		return CompletableFuture.runAsync(() -> {
			if (this.active) {
				return;
			}
			this.active = true;
			this.failedTakes.clear();
			long interval = this.context.settings().renewInterval().toMillis();
			this.loop = this.context.thread().scheduleWithFixedDelay(this::tick, 0, interval, TimeUnit.MILLISECONDS);
			this.renewalLoop = this.context.renewals().scheduleWithFixedDelay(this::renewAll, interval, interval,
					TimeUnit.MILLISECONDS);
		}, this.context.thread());
	}

	/** @return completes when every segment was handed over (cursor stored, lease released) */
	CompletionStage<Void> stop() {
		CompletableFuture<Void> done = new CompletableFuture<>();
		this.context.thread().execute(() -> {
			this.active = false;
			if (this.loop != null) {
				this.loop.cancel(false);
				this.loop = null;
			}
			// Renewals go on until every segment was handed over: a batch in hand finishes and stores its cursor
			// under a valid term, however long it takes.
			ScheduledFuture<?> renewals = this.renewalLoop;
			this.renewalLoop = null;
			List<CompletableFuture<Void>> each = this.segments.stream().filter((s) -> s.term != null)
				.map(this::handOver).toList();
			CompletableFuture.allOf(each.toArray(CompletableFuture[]::new))
				.thenCompose((ignored) -> this.context.members().leave(this.projection, this.self))
				.whenComplete((ok, error) -> {
					if (renewals != null) {
						renewals.cancel(false);
					}
					if (error != null) {
						logger.warn("Projection {}: leaving the members failed (others see this instance silent "
								+ "after the lease timeout)", this.projection, Errors.unwrap(error));
					}
					done.complete(null);
				});
		});
		return done;
	}

	private void tick() {
		try {
			if (!this.active || this.context.frozen().get()) {
				return;
			}
			// The rows first: an instance that cannot read them cannot take or keep watching segments, so it must
			// not beat either (others would count it live and leave it the segments it cannot run).
			Map<String, Lease> rows = watchRows();
			if (rows == null) {
				return;
			}
			Set<String> live = liveMembers();
			if (live == null) {
				return;
			}
			for (SegmentedProjection.Segment segment : this.segments) {
				boolean mine = this.self.equals(Rendezvous.winner(this.projection, segment.range.key(), live));
				if (!mine) {
					// A streak ends when the segment goes to another instance: if it comes back, its first failure
					// is a WARN again and waits from the start.
					this.failedTakes.remove(segment);
				}
				if (segment.term == null && mine) {
					tryTake(segment, Optional.ofNullable(rows.get(segment.range.key())));
				}
				else if (segment.term != null && !mine && !this.handingOver.containsKey(segment)) {
					handOver(segment);
				}
			}
		}
		catch (Throwable ex) {
			// Anything: a throw would end this loop for good (scheduleWithFixedDelay runs it no more) while the
			// renewal loop kept renewing the segments held, so they would stay held and never run.
			logger.warn("Projection {}: balancing its segments failed; trying again", this.projection, ex);
		}
	}

	private @Nullable Set<String> liveMembers() {
		try {
			join(this.context.members().beat(this.projection, this.self, this.timeout.multipliedBy(3)));
			Map<String, Long> beats = join(this.context.members().list(this.projection));
			return this.members.live(beats, this.context.nanoClock().getAsLong());
		}
		catch (RuntimeException ex) {
			logger.warn("Projection {}: reading its members failed; keeping the segments held", this.projection, ex);
			return null;
		}
	}

	/**
	 * On the renewal thread: sends the renewal of every lease held that has none in flight, without waiting for
	 * any; drops (on the lease thread) a segment whose term lapsed.
	 */
	private void renewAll() {
		try {
			// Also while stopping (no longer active): the segments still held are being handed over.
			if (this.context.frozen().get()) {
				return;
			}
			for (SegmentedProjection.Segment segment : this.segments) {
				LeaseTerm term = segment.term;
				if (term != null) {
					renew(segment, term);
				}
			}
		}
		catch (Throwable ex) {
			// Anything, an Error too: a throw would end this loop for good (scheduleWithFixedDelay runs it no more),
			// and the segments held would lapse while this instance still beats (finding 32).
			logger.warn("Projection {}: renewing its leases failed; trying again", this.projection, ex);
		}
	}

	private void renew(SegmentedProjection.Segment segment, LeaseTerm term) {
		if (!term.valid()) {
			lose(segment, term, "its lease lapsed or a cursor write was fenced");
			return;
		}
		if (!this.renewing.add(term)) {
			return;
		}
		long started = this.context.nanoClock().getAsLong();
		CompletableFuture<Optional<Lease>> renewal;
		try {
			renewal = this.context.leases().renew(term.lease()).toCompletableFuture();
		}
		catch (Throwable ex) {
			// An Error too: thrown past here it left the term marked as renewing, so it was never renewed again.
			renewal = CompletableFuture.failedFuture(ex);
		}
		// Bound: past the term's validity a renewal's answer is of no use, so it cannot hold the segment.
		renewal.orTimeout(this.validFor.toMillis(), TimeUnit.MILLISECONDS).whenComplete((renewed, error) -> {
			this.renewing.remove(term);
			if (error == null && renewed.isPresent()) {
				term.renewed(renewed.get(), started);
			}
			else if (error == null) {
				lose(segment, term, "another instance took its lease");
			}
			else {
				Throwable cause = Errors.unwrap(error);
				lose(segment, term, (cause instanceof TimeoutException)
						? "renewing its lease took longer than the term (" + this.validFor.toMillis() + " ms)"
						: "renewing its lease failed: " + cause);
			}
		});
	}

	/** Ends a term at once (from any thread) and drops its segment on the lease thread. */
	private void lose(SegmentedProjection.Segment segment, LeaseTerm term, String why) {
		term.lose();
		try {
			this.context.thread().execute(() -> {
				if (segment.term == term) {
					drop(segment, term, why);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// The engine is closing: the term is lost, nothing more runs under it.
		}
	}

	/** Stops a segment at once: nothing more is handled or saved under the term. */
	private void drop(SegmentedProjection.Segment segment, LeaseTerm term, String why) {
		SegmentRunner runner = segment.runner;
		CompletableFuture<Void> handOver = vacate(segment, term);
		if (runner != null) {
			runner.retire();
		}
		if (handOver != null) {
			handOver.complete(null);
		}
		logger.warn("Projection {}: stopped segment {} (epoch {}): {}", this.projection, segment.range.key(),
				term.epoch(), why);
	}

	/**
	 * Ends a term and clears its segment (no term, no runner, no watch, no hand-over), on the lease thread: what
	 * losing a segment ({@link #drop}) and releasing it ({@link #release}) both do.
	 * @return the hand-over under way, if any, for the caller to complete once the runner was told to stop
	 */
	private @Nullable CompletableFuture<Void> vacate(SegmentedProjection.Segment segment, LeaseTerm term) {
		term.lose();
		segment.term = null;
		segment.runner = null;
		this.watches.remove(segment);
		return this.handingOver.remove(segment);
	}

	/**
	 * Reads the lease rows of every segment (in one request, so every round shows whether this instance can read
	 * them at all) and feeds the {@link LeaseWatch} of each segment it does not hold, also for segments another
	 * instance should own: so when an owner falls silent, its segments' silence is counted from then on, in
	 * parallel with its membership's, and they are taken about one lease timeout later.
	 * @return the rows read (empty segments are absent), or {@code null} if they could not be read
	 */
	private @Nullable Map<String, Lease> watchRows() {
		try {
			Map<String, Lease> rows = join(this.context.leases().watch(this.projection,
					this.segments.stream().map((s) -> s.range.key()).toList()));
			long now = this.context.nanoClock().getAsLong();
			this.rowsRead.accept(rows, now);
			List<SegmentedProjection.Segment> unheld = this.segments.stream().filter((s) -> s.term == null).toList();
			for (SegmentedProjection.Segment segment : unheld) {
				this.watches.computeIfAbsent(segment, (s) -> new LeaseWatch(this.timeout))
					.mayTake(Optional.ofNullable(rows.get(segment.range.key())), now);
			}
			return rows;
		}
		catch (RuntimeException ex) {
			logger.warn("Projection {}: reading its lease rows failed; no heartbeat this round, trying again",
					this.projection, ex);
			return null;
		}
	}

	private void tryTake(SegmentedProjection.Segment segment, Optional<Lease> row) {
		FailedTakes failed = this.failedTakes.get(segment);
		if (failed != null && !failed.mayTryAgain(this.context.nanoClock().getAsLong())) {
			return;
		}
		String key = segment.range.key();
		LeaseWatch watch = this.watches.computeIfAbsent(segment, (s) -> new LeaseWatch(this.timeout));
		if (!watch.mayTake(row, this.context.nanoClock().getAsLong())) {
			return;
		}
		long started = this.context.nanoClock().getAsLong();
		Optional<Lease> taken = join(this.context.leases().acquire(this.projection, key, this.self, row));
		if (taken.isEmpty()) {
			return;
		}
		this.watches.remove(segment);
		LeaseTerm term = new LeaseTerm(taken.get(), started, this.validFor, this.context.nanoClock());
		try {
			fence(segment, term);
		}
		catch (Exception | Error ex) {
			// An Error too: thrown past here it left the lease held with no term, neither renewed nor run, until its
			// silence reached the lease timeout and this instance took its own row over (finding 32).
			term.lose();
			takeFailed(segment, term, "could not fence its cursor", ex);
			return;
		}
		segment.term = term;
		try {
			this.starter.run(segment, term::valid, new FencedCursor(this.context.offsets(), term));
		}
		catch (Exception | Error ex) {
			// Not held without a running owner: the round only takes segments without a term, so a segment left
			// with this one would be renewed, never run, until the instance stops. Released, it is taken again.
			SegmentRunner runner = segment.runner;
			vacate(segment, term);
			if (runner != null) {
				runner.retire();
			}
			takeFailed(segment, term, "could not start its runner", ex);
			return;
		}
		FailedTakes streak = this.failedTakes.remove(segment);
		if (streak == null) {
			logger.info("Projection {}: runs segment {} (epoch {})", this.projection, key, term.epoch());
		}
		else {
			logger.info("Projection {}: runs segment {} (epoch {}) after {} failed takes", this.projection, key,
					term.epoch(), streak.count());
		}
	}

	/**
	 * Fences a segment's cursor under the term just taken, when the segment has a cursor of its own. The wait is
	 * bounded by what is left of the term ({@link LeaseTerm#remainingNanos()}): a fence that answers later would
	 * start the runner under a lapsed term
	 * (finding 32), and it would block the lease thread meanwhile.
	 */
	private void fence(SegmentedProjection.Segment segment, LeaseTerm term) {
		BiFunction<SegmentedProjection.Segment, DurableStateOffsetStore, CompletionStage<TagOffset>> from = this.initial;
		if (from == null) {
			return;
		}
		DurableStateOffsetStore offsets = this.context.offsets();
		long bound = Math.max(0, term.remainingNanos());
		try {
			join(offsets.fence(segment.id, () -> from.apply(segment, offsets), term.epoch())
				.toCompletableFuture()
				.orTimeout(bound, TimeUnit.NANOSECONDS));
		}
		catch (CompletionException ex) {
			if (Errors.unwrap(ex) instanceof TimeoutException timeout) {
				throw new IllegalStateException(fenceTooLong(bound), timeout);
			}
			throw ex;
		}
		if (!term.valid()) {
			throw new IllegalStateException(fenceTooLong(bound));
		}
	}

	/** @return why a fence bounded by {@code boundNanos} (what was left of the term at its send) did not count */
	private String fenceTooLong(long boundNanos) {
		return "fencing took longer than what was left of the term (" + TimeUnit.NANOSECONDS.toMillis(boundNanos)
				+ " of its " + this.validFor.toMillis() + " ms)";
	}

	/**
	 * A take that could not start its segment: releases the lease and waits before the segment is taken again, the
	 * wait doubling from the renewal interval up to the lease timeout while the takes keep failing, so that a
	 * runner that cannot start does not churn a take and a release (two Paxos rounds) at every round (finding 32).
	 * The first failure of a streak is a WARN, the later ones DEBUG; the take that ends it says so (INFO).
	 * A fatal Error is thrown on once the lease was released.
	 */
	private void takeFailed(SegmentedProjection.Segment segment, LeaseTerm term, String what, Throwable ex) {
		try {
			this.context.leases().release(term.lease()).whenComplete((released, failure) -> {
				if (failure != null) {
					logger.warn("Projection {}: releasing segment {} (epoch {}) after a failed take failed; its row "
							+ "lapses after the lease timeout", this.projection, segment.range.key(), term.epoch(),
							Errors.unwrap(failure));
				}
			});
		}
		catch (Exception | Error releaseFailed) {
			// Sent by the session on this thread, and it threw: the row lapses after the lease timeout.
			ex.addSuppressed(releaseFailed);
		}
		FailedTakes failed = this.failedTakes.computeIfAbsent(segment,
				(s) -> new FailedTakes(this.context.settings().renewInterval(), this.timeout));
		Duration wait = failed.failed(this.context.nanoClock().getAsLong());
		if (failed.count() == 1) {
			logger.warn("Projection {}: took segment {} (epoch {}) but {}; released it. Taking it again in {} ms, "
					+ "then after waits doubling up to the lease timeout while it keeps failing (logged at DEBUG)",
					this.projection, segment.range.key(), term.epoch(), what, wait.toMillis(), ex);
		}
		else {
			logger.debug("Projection {}: took segment {} (epoch {}) but {} ({} failed takes); released it, taking it "
					+ "again in {} ms", this.projection, segment.range.key(), term.epoch(), what, failed.count(),
					wait.toMillis(), ex);
		}
		if (ex instanceof Error error && Errors.fatal(error)) {
			throw error;
		}
	}

	/**
	 * A reset of a segment's cursor failed and left its runner stopped while the lease is held: release the
	 * segment (as on a hand-over), so that it is taken again from its stored cursor instead of staying held
	 * without a running owner.
	 * @param segment the segment
	 * @param runner the runner whose reset failed
	 * @param error why
	 */
	void resetFailed(SegmentedProjection.Segment segment, SegmentRunner runner, Throwable error) {
		try {
			this.context.thread().execute(() -> {
				if (segment.runner != runner || segment.term == null || this.handingOver.containsKey(segment)) {
					return;
				}
				logger.warn("Projection {}: resetting segment {} failed; releasing it so it runs again from its "
						+ "stored cursor: {}", this.projection, segment.range.key(), Errors.unwrap(error).toString());
				handOver(segment);
			});
		}
		catch (RejectedExecutionException ex) {
			// The engine is closing: its leases lapse or were released.
		}
	}

	/**
	 * Stops the segment's runner after the batch in hand (its cursor stored), then releases the lease.
	 * @return completes once released
	 */
	private CompletableFuture<Void> handOver(SegmentedProjection.Segment segment) {
		CompletableFuture<Void> existing = this.handingOver.get(segment);
		if (existing != null) {
			return existing;
		}
		CompletableFuture<Void> done = new CompletableFuture<>();
		this.handingOver.put(segment, done);
		LeaseTerm term = segment.term;
		SegmentRunner runner = segment.runner;
		CompletionStage<Void> stopped = (runner != null) ? runner.retire() : CompletableFuture.completedFuture(null);
		stopped.whenComplete((ok, error) -> this.context.thread().execute(() -> release(segment, term, done)));
		return done;
	}

	private void release(SegmentedProjection.Segment segment, @Nullable LeaseTerm term, CompletableFuture<Void> done) {
		try {
			if (term == null || segment.term != term) {
				return;
			}
			vacate(segment, term);
			try {
				join(this.context.leases().release(term.lease()));
				logger.info("Projection {}: handed segment {} over (epoch {})", this.projection, segment.range.key(),
						term.epoch());
			}
			catch (RuntimeException ex) {
				logger.warn("Projection {}: releasing segment {} failed (it is taken over after the lease timeout)",
						this.projection, segment.range.key(), ex);
			}
		}
		finally {
			done.complete(null);
		}
	}

	private static <T> T join(CompletionStage<T> stage) {
		try {
			return stage.toCompletableFuture().join();
		}
		catch (RuntimeException ex) {
			Throwable cause = Errors.unwrap(ex);
			throw (cause instanceof RuntimeException runtime) ? runtime : ex;
		}
	}

}
