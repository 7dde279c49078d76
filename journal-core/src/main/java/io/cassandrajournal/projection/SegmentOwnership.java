package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
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
 * The parts: {@link LeaseRenewals} (the renewal loop), {@link SegmentTakes} (take, fence, failed takes) and
 * {@link SegmentHandOvers} (hand-over, drop, release); this class runs the balancing rounds and the life cycle.
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

	private final String self;

	private final Duration timeout;

	private final MemberTable.Watch members;

	/** Each unheld segment's watch of its lease row (lease thread only; taking and giving up also use it). */
	private final Map<SegmentedProjection.Segment, LeaseWatch> watches = new HashMap<>();

	private final LeaseRenewals renewals;

	private final SegmentTakes takes;

	private final SegmentHandOvers handOvers;

	/** Told of every round's lease rows (the status view counts ownerless segments from them). */
	private final BiConsumer<Map<String, Lease>, Long> rowsRead;

	private @Nullable ScheduledFuture<?> loop;

	private @Nullable ScheduledFuture<?> renewalLoop;

	private volatile boolean active;

	/**
	 * @param initial where a segment whose cursor is absent starts (another number of segments ran before:
	 * SegmentLayouts); {@code null} for segments without a cursor of their own (a shared fan-out's: each entity's
	 * runner fences its own cursor under the term as it starts, {@link FencedCursor#load})
	 */
	SegmentOwnership(String projection, List<SegmentedProjection.Segment> segments, Context context, Starter starter,
			@Nullable BiFunction<SegmentedProjection.Segment, DurableStateOffsetStore, CompletionStage<TagOffset>> initial,
			BiConsumer<Map<String, Lease>, Long> rowsRead) {
		this.projection = projection;
		this.rowsRead = rowsRead;
		this.segments = segments;
		this.context = context;
		this.self = context.settings().instanceId();
		this.timeout = context.settings().leaseTimeout();
		// How long a term stays valid after the start of its last successful renewal.
		Duration validFor = this.timeout.minus(context.settings().renewInterval());
		this.members = new MemberTable.Watch(this.self, this.timeout);
		this.renewals = new LeaseRenewals(projection, segments, context, validFor, this::lose);
		this.handOvers = new SegmentHandOvers(projection, context, this.watches);
		this.takes = new SegmentTakes(projection, context, starter, initial, validFor, this.watches, this.handOvers);
	}

	CompletionStage<Void> start() {
		return CompletableFuture.runAsync(() -> {
			if (this.active) {
				return;
			}
			this.active = true;
			this.takes.clear();
			long interval = this.context.settings().renewInterval().toMillis();
			this.loop = this.context.thread().scheduleWithFixedDelay(this::tick, 0, interval, TimeUnit.MILLISECONDS);
			this.renewalLoop = this.context.renewals().scheduleWithFixedDelay(this.renewals::renewAll, interval, interval,
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
				.map(this.handOvers::handOver).toList();
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
					this.takes.notMine(segment);
				}
				if (segment.term == null && mine) {
					this.takes.tryTake(segment, Optional.ofNullable(rows.get(segment.range.key())));
				}
				else if (segment.term != null && !mine && !this.handOvers.handingOver(segment)) {
					this.handOvers.handOver(segment);
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

	/** Ends a term at once (from any thread) and drops its segment on the lease thread. */
	private void lose(SegmentedProjection.Segment segment, LeaseTerm term, String why) {
		term.lose();
		try {
			this.context.thread().execute(() -> {
				if (segment.term == term) {
					this.handOvers.drop(segment, term, why);
				}
			});
		}
		catch (RejectedExecutionException ex) {
			// The engine is closing: the term is lost, nothing more runs under it.
		}
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
				if (segment.runner != runner || segment.term == null || this.handOvers.handingOver(segment)) {
					return;
				}
				logger.warn("Projection {}: resetting segment {} failed; releasing it so it runs again from its "
						+ "stored cursor: {}", this.projection, segment.range.key(), Errors.unwrap(error).toString());
				this.handOvers.handOver(segment);
			});
		}
		catch (RejectedExecutionException ex) {
			// The engine is closing: its leases lapse or were released.
		}
	}

	/** @return the stage's result, its cause thrown as it is when it is a RuntimeException */
	static <T> T join(CompletionStage<T> stage) {
		try {
			return stage.toCompletableFuture().join();
		}
		catch (RuntimeException ex) {
			Throwable cause = Errors.unwrap(ex);
			throw (cause instanceof RuntimeException runtime) ? runtime : ex;
		}
	}

}
