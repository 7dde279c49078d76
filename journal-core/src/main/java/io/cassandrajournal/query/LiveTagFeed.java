package io.cassandrajournal.query;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.journal.PersistentEvent;

/**
 * The live form of a tag query: each {@link #poll()} returns the events that became visible since the
 * last poll, including late ones (see {@link FeedSettings} for the guarantee). Payloads are the stored JSON
 * text; deserialize them per event (a bad payload then fails only its own event).
 * <p>
 * Not thread-safe: one poller at a time, and {@link #poll()} must not be called before the previous stage
 * completed.
 * <p>
 * <b>Late rows of sealed events.</b> Over the tag index, a row that this feed reads for the first time at least the
 * journal's {@code in-flight-wait} after its time stamp (its claim's) is checked against the events table before it
 * is delivered: the late tag rows of an uncertain append whose numbers a replay sealed (docs/reliability.md, finding
 * 13) are skipped, sealed again and deleted from the index (see {@link #lateRowsSkipped()}). Checked are the rows the
 * sweep delivers, and the head's rows aged between {@code in-flight-wait} and {@code in-flight-wait} plus both
 * windows (a feed started near real time); not the head's older rows while it catches up on history, which would
 * cost one read per event.
 */
public final class LiveTagFeed {

	private static final Logger logger = LoggerFactory.getLogger(LiveTagFeed.class);

	/** How often the drop marks are read again (as a projection's check reads them). */
	private static final long DROPS_RECHECK_MILLIS = Duration.ofMinutes(1).toMillis();

	private final TagEventReader reader;

	private final TagFilter filter;

	private final FeedSettings settings;

	private final Clock clock;

	private TagOffset head;

	private TagOffset sweep;

	private boolean caughtUp;

	/**
	 * Whether the last sweep read reached its floor: the next one then waits until the time floor
	 * ({@code now - backtrack}) has moved on by {@link #sweepStepMillis} (issue 17: under a steady load every poll
	 * read the sweep's few milliseconds again).
	 */
	private boolean sweptToFloor;

	/** How far the sweep's floor moves between two sweep reads once the sweep has caught up: 1% of the window. */
	private final long sweepStepMillis;

	/** Delivered events not yet passed by the sweep, for de-duplication. */
	private final TreeMap<TagOffset, Boolean> delivered = new TreeMap<>();

	/** Checks late rows against the events table; null when rows need no check (a scan, or no in-flight wait). */
	private final @Nullable LateRowCheck lateRows;

	private final long inFlightWaitMillis;

	private long lateRowsSkipped;

	/** Reads a tag's drop mark; {@code null} when the tag index is not bucketed (no marks). */
	private @Nullable Function<String, CompletionStage<Optional<Instant>>> dropMarks;

	/** When the marks were last read (this feed's clock), {@link Long#MIN_VALUE} before the first read. */
	private long dropsReadAt = Long.MIN_VALUE;

	/** The earliest position (epoch millis) this feed was at since the marks were last read. */
	private long walkedFrom = Long.MAX_VALUE;

	/** The marks last read, by tag. */
	private final Map<String, Instant> knownDrops = new LinkedHashMap<>();

	/** The dropped ranges this feed walked across, in the order found. */
	private final Set<DroppedTagRange> dropped = new LinkedHashSet<>();

	/** The earliest time stamp of appends woken since the last poll started ({@link #rewind}). */
	private long rewindTo = Long.MAX_VALUE;

	/**
	 * The check of rows first read late (see the class comment): implemented by {@link LateTagRows}.
	 */
	@FunctionalInterface
	interface LateRowCheck {

		/**
		 * @param rows rows first read at least {@code in-flight-wait} after their time stamps
		 * @return the offsets of those whose events are absent and now final: not to deliver
		 */
		CompletionStage<Set<TagOffset>> absent(List<TaggedEvent<String>> rows);

	}

	LiveTagFeed(TagEventReader reader, TagFilter filter, TagOffset start, FeedSettings settings, Clock clock) {
		this(reader, filter, start, settings, clock, Duration.ZERO, null);
	}

	LiveTagFeed(TagEventReader reader, TagFilter filter, TagOffset start, FeedSettings settings, Clock clock,
			Duration inFlightWait, @Nullable LateRowCheck lateRows) {
		this.reader = reader;
		this.filter = filter;
		this.settings = settings;
		this.clock = clock;
		this.head = start;
		this.sweep = start;
		this.inFlightWaitMillis = inFlightWait.toMillis();
		this.sweepStepMillis = Math.max(1, settings.backtrackWindow().toMillis() / 100);
		this.lateRows = (this.inFlightWaitMillis > 0) ? lateRows : null;
	}

	/** @return the filter */
	public TagFilter filter() {
		return this.filter;
	}

	/**
	 * @return the offset to store: every event before it was delivered by this feed; resuming from it
	 * delivers nothing new twice except what lies between it and the head
	 */
	public synchronized TagOffset safeOffset() {
		return (this.sweep.compareTo(this.head) < 0) ? this.sweep : this.head;
	}

	/**
	 * An append of this process that this feed delivers was acknowledged (its wake-up): the next head read starts
	 * again at its time stamp if the head has passed it.
	 * @param timestamp the append's time stamp (epoch milliseconds)
	 */
	public synchronized void rewind(long timestamp) {
		this.rewindTo = Math.min(this.rewindTo, timestamp);
	}

	/**
	 * An append of this process that this feed delivers was acknowledged (its wake-up): like {@link #rewind(long)},
	 * unless this feed delivered one of its events already. Its rows were then visible when the head read them (the
	 * usual case under concurrent appends, where a newer append's poll reads an older one's rows), and reading from
	 * its time stamp again would only read rows the feed drops; under load that kept the head behind one slow
	 * append. An event of the append the feed did not deliver (a row in another tag's partition, not visible yet) is
	 * left to the sweep, as for other processes' appends.
	 * @param timestamp the append's time stamp (epoch milliseconds), shared by its events
	 * @param persistenceId the append's persistenceId
	 * @param firstSequenceNr its first sequence number
	 * @param lastSequenceNr its last sequence number
	 * @see #rewindIfUndelivered(long, String, long, long)
	 */
	public void rewind(long timestamp, String persistenceId, long firstSequenceNr, long lastSequenceNr) {
		rewindIfUndelivered(timestamp, persistenceId, firstSequenceNr, lastSequenceNr);
	}

	/**
	 * As {@link #rewind(long, String, long, long)}, and tells whether it rewound.
	 * @param timestamp the append's time stamp (epoch milliseconds), shared by its events
	 * @param persistenceId the append's persistenceId
	 * @param firstSequenceNr its first sequence number
	 * @param lastSequenceNr its last sequence number
	 * @return whether it rewound: {@code false} when this feed delivered one of the append's events already (a
	 * projection then needs no poll for it)
	 */
	public synchronized boolean rewindIfUndelivered(long timestamp, String persistenceId, long firstSequenceNr,
			long lastSequenceNr) {
		TagOffset first = new TagOffset(timestamp, persistenceId, firstSequenceNr);
		TagOffset last = new TagOffset(timestamp, persistenceId, lastSequenceNr);
		if (this.delivered.subMap(first, true, last, true).isEmpty()) {
			rewind(timestamp);
			return true;
		}
		return false;
	}

	/** @return whether the last poll's head read reached the newest readable event */
	public synchronized boolean caughtUp() {
		return this.caughtUp;
	}

	/** @return where the head read is */
	public synchronized TagOffset headOffset() {
		return this.head;
	}

	/**
	 * Reads the next page at the head and, when the head is caught up, the trailing sweep. A poll is all or
	 * nothing: the new head, sweep and delivered events are computed aside and committed only when every read
	 * of the poll succeeded; a failed poll leaves the feed as it was, so the next poll reads the same events
	 * again.
	 * @return events to deliver (possibly none); late events follow the head's events
	 */
	public CompletionStage<List<TaggedEvent<String>>> poll() {
		return checkDrops().thenCompose((ignored) -> pollEvents());
	}

	/**
	 * Tells when this feed walks across a range of its tags that a retention cleanup dropped from the bucketed tag
	 * index ({@code JournalCleanup.dropTagBuckets}): its events are never delivered. Projections are told by their
	 * own check; a plain feed used to walk across the range silently (docs/reliability.md, finding 30).
	 * @return the dropped ranges this feed walked (or starts to walk) across, in the order found; empty without a
	 * bucketed tag index
	 */
	public synchronized List<DroppedTagRange> droppedRanges() {
		return List.copyOf(this.dropped);
	}

	/** Used by the read journal when the tag index is bucketed (its drop marks can exist). */
	LiveTagFeed watchingDrops(Function<String, CompletionStage<Optional<Instant>>> marks) {
		this.dropMarks = marks;
		return this;
	}

	/**
	 * Reads the drop marks of the filter's tags with the first poll and then at most every
	 * {@link #DROPS_RECHECK_MILLIS}, and compares them with the earliest position this feed was at since the last
	 * read (a bucket dropped between two reads may have been walked across meanwhile). Never fails the poll: a failed
	 * read of the marks is tried again at the next poll, compared with the same earliest position.
	 */
	private CompletionStage<Void> checkDrops() {
		Function<String, CompletionStage<Optional<Instant>>> marks = this.dropMarks;
		if (marks == null) {
			return CompletableFuture.completedFuture(null);
		}
		long now = this.clock.millis();
		long from;
		synchronized (this) {
			this.walkedFrom = Math.min(this.walkedFrom, safeOffset().timestamp());
			from = this.walkedFrom;
			if (this.dropsReadAt != Long.MIN_VALUE && now - this.dropsReadAt < DROPS_RECHECK_MILLIS) {
				compareDrops(from);
				return CompletableFuture.completedFuture(null);
			}
		}
		Set<String> tags = new LinkedHashSet<>(this.filter.anyTags());
		tags.addAll(this.filter.allTags());
		Map<String, CompletableFuture<Optional<Instant>>> reads = new LinkedHashMap<>();
		for (String tag : tags) {
			reads.put(tag, marks.apply(tag).toCompletableFuture());
		}
		return CompletableFuture.allOf(reads.values().toArray(CompletableFuture[]::new)).handle((ok, error) -> {
			if (error != null) {
				logger.debug("Live feed of tag filter '{}': reading the drop marks failed; reading them again at the "
						+ "next poll", this.filter.canonical(), error);
				return null;
			}
			synchronized (this) {
				this.knownDrops.clear();
				reads.forEach((tag, read) -> read.join().ifPresent((mark) -> this.knownDrops.put(tag, mark)));
				this.dropsReadAt = now;
				compareDrops(from);
				this.walkedFrom = safeOffset().timestamp();
			}
			return null;
		});
	}

	private void compareDrops(long from) {
		this.knownDrops.forEach((tag, mark) -> {
			DroppedTagRange range = new DroppedTagRange(tag, mark);
			if (from < mark.toEpochMilli() && this.dropped.add(range)) {
				logger.warn("Live feed of tag filter '{}': {}; this feed does not deliver them (docs/reliability.md, "
						+ "finding 30)", this.filter.canonical(), range.describe());
			}
		});
	}

	private CompletionStage<List<TaggedEvent<String>>> pollEvents() {
		long now = this.clock.millis();
		long backtrack = this.settings.backtrackWindow().toMillis();
		Step step;
		synchronized (this) {
			// A woken append whose rows the head passed before they were visible (a read between its time stamp and
			// its write): read again from its time stamp, after the sweep; rows delivered already are dropped.
			TagOffset rewound = new TagOffset(this.rewindTo, "", 0);
			this.rewindTo = Long.MAX_VALUE;
			if (rewound.compareTo(this.head) < 0 && rewound.compareTo(this.sweep) > 0) {
				this.head = rewound;
			}
			step = new Step(this.head, this.sweep);
			step.sweptToFloor = this.sweptToFloor;
		}
		return this.reader
			.read(this.filter, step.headBefore, now - this.settings.consistencyWindow().toMillis(),
					this.settings.pageSize())
			.thenCompose((page) -> {
				collect(page.events(), step);
				step.head = page.resumeAfter();
				step.caughtUp = page.caughtUp();
				if (backtrack == 0) {
					step.sweep = step.head;
					return finish(step, now);
				}
				// Events stamped before now - backtrack were visible when this read ran, so what this read
				// covered up to there needs no sweep. The sweep may skip ahead only if it had already reached
				// where this read started: earlier head reads may have passed events that were not visible
				// yet (they were read near real time), and those must be swept, not skipped.
				TagOffset settled = new TagOffset(Math.max(0, now - backtrack), "", 0);
				TagOffset floor = (settled.compareTo(step.head) < 0) ? settled : step.head;
				if (!page.caughtUp() && step.sweep.compareTo(step.headBefore) >= 0) {
					if (floor.compareTo(step.sweep) > 0) {
						step.sweep = floor;
						step.sweptToFloor = true;
					}
					return finish(step, now);
				}
				if (step.sweep.compareTo(floor) >= 0) {
					return finish(step, now);
				}
				// The sweep reached its floor at its last read: it reads again once the time floor has moved on by
				// a step (1% of the window, 100 ms by default), not at every poll. It trails by that much more; what
				// it delivers is the same (rows visible by the time it reads them), only up to a step later. Measured
				// against the time, not the floor: a head that stopped (no new events) is a floor that stays.
				if (step.sweptToFloor && settled.timestamp() - step.sweep.timestamp() < this.sweepStepMillis) {
					return finish(step, now);
				}
				return this.reader.read(this.filter, step.sweepBefore, now - backtrack, this.settings.pageSize())
					.thenCompose((late) -> {
						step.sweptFrom = step.out.size();
						collect(late.events(), step);
						if (late.resumeAfter().compareTo(step.sweep) > 0) {
							step.sweep = late.resumeAfter();
						}
						if (late.caughtUp() && floor.compareTo(step.sweep) > 0) {
							step.sweep = floor;
						}
						step.sweptToFloor = late.caughtUp();
						return finish(step, now);
					});
			});
	}

	/** One poll's outcome, built aside and committed only when all its reads succeeded. */
	private static final class Step {

		final TagOffset headBefore;

		final TagOffset sweepBefore;

		TagOffset head;

		TagOffset sweep;

		boolean caughtUp;

		/** See {@link LiveTagFeed#sweptToFloor}: carried over, set by this poll's sweep read. */
		boolean sweptToFloor;

		final List<TaggedEvent<String>> out = new ArrayList<>();

		/** Where the sweep's rows start in {@link #out} (the head's rows come first). */
		int sweptFrom = Integer.MAX_VALUE;

		/** Rows of sealed events found by the late-row check: remembered as delivered, not delivered. */
		final Set<TagOffset> skipped = new HashSet<>();

		final Set<TagOffset> outOffsets = new HashSet<>();

		Step(TagOffset head, TagOffset sweep) {
			this.headBefore = head;
			this.sweepBefore = sweep;
			this.head = head;
			this.sweep = sweep;
		}

	}

	/** Adds the events after the sweep that neither an earlier poll nor this one delivered. */
	private void collect(List<TaggedEvent<String>> events, Step step) {
		synchronized (this) {
			// Rows after the newest remembered offset (the head's, as a rule) cannot have been delivered: no
			// lookup in the map for them.
			TagOffset newest = this.delivered.isEmpty() ? null : this.delivered.lastKey();
			for (TaggedEvent<String> event : events) {
				TagOffset offset = event.offset();
				if (offset.compareTo(step.sweepBefore) > 0
						&& (newest == null || offset.compareTo(newest) > 0 || !this.delivered.containsKey(offset))
						&& step.outOffsets.add(offset)) {
					step.out.add(event);
				}
			}
		}
	}

	/**
	 * Checks the poll's rows that were first read late (see the class comment), drops those of sealed events, then
	 * commits. A failed check fails the poll like a failed read.
	 * @param now when the poll's reads started
	 */
	private CompletionStage<List<TaggedEvent<String>>> finish(Step step, long now) {
		LateRowCheck check = this.lateRows;
		if (check == null || step.out.isEmpty()) {
			return commit(step);
		}
		long wait = this.inFlightWaitMillis;
		long headHorizon = wait + this.settings.consistencyWindow().toMillis() + this.settings.backtrackWindow().toMillis();
		List<TaggedEvent<String>> late = new ArrayList<>();
		for (int i = 0; i < step.out.size(); i++) {
			TaggedEvent<String> event = step.out.get(i);
			long age = now - event.offset().timestamp();
			if (age >= wait && (i >= step.sweptFrom || age <= headHorizon)) {
				late.add(event);
			}
		}
		if (late.isEmpty()) {
			return commit(step);
		}
		return check.absent(late).thenCompose((absent) -> {
			if (!absent.isEmpty()) {
				step.out.removeIf((event) -> absent.contains(event.offset()));
				step.skipped.addAll(absent);
			}
			return commit(step);
		});
	}

	private CompletionStage<List<TaggedEvent<String>>> commit(Step step) {
		synchronized (this) {
			this.head = step.head;
			this.sweep = step.sweep;
			this.caughtUp = step.caughtUp;
			this.sweptToFloor = step.sweptToFloor;
			this.lateRowsSkipped += step.skipped.size();
			if (this.settings.backtrackWindow().isZero()) {
				this.delivered.clear();
			}
			else {
				// Only what lies after the sweep is remembered (the rest would be dropped at once): a feed catching
				// up on events older than the backtrack window puts nothing in the map.
				for (TaggedEvent<String> event : step.out) {
					remember(event.offset());
				}
				step.skipped.forEach(this::remember);
				this.delivered.headMap(this.sweep, true).clear();
			}
		}
		return CompletableFuture.completedFuture(step.out);
	}

	/** Remembers a delivered (or skipped) offset until the sweep passes it. */
	private void remember(TagOffset offset) {
		if (offset.compareTo(this.sweep) > 0) {
			this.delivered.put(offset, Boolean.TRUE);
		}
	}

	/**
	 * @return how many tag rows this feed skipped because they were read late and their events are not in the
	 * journal (the tag rows of an uncertain append whose numbers were sealed; each also logged once at WARN)
	 */
	public synchronized long lateRowsSkipped() {
		return this.lateRowsSkipped;
	}

	/**
	 * Counts events after an offset without moving the feed (safe beside a poll in flight).
	 * @param offset the offset
	 * @param limit rows to examine at most
	 * @return matching events among at most {@code limit} rows after the offset, up to now
	 */
	public CompletionStage<Long> countAfter(TagOffset offset, int limit) {
		return this.reader.read(this.filter, offset, this.clock.millis(), limit)
			.thenApply((page) -> (long) page.events().size());
	}

	/** @return how many delivered events are remembered for de-duplication */
	public synchronized int rememberedEvents() {
		return this.delivered.size();
	}

	/**
	 * @param event a raw event
	 * @return its offset
	 */
	static TagOffset offsetOf(PersistentEvent<?> event) {
		return new TagOffset(event.timestamp().toEpochMilli(), event.persistenceId(), event.sequenceNr());
	}

}
