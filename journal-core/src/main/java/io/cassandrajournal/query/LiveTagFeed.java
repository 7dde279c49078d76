package io.cassandrajournal.query;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.internal.TagEventReader;
import io.cassandrajournal.journal.PersistentEvent;

/**
 * The live form of a tag query: each {@link #poll()} returns the events that became visible since the
 * last poll, including late ones (see {@link FeedSettings} for the guarantee). Payloads are the stored JSON
 * text; deserialize them per event (a bad payload then fails only its own event).
 * <p>
 * Not thread-safe: one poller at a time, and {@link #poll()} must not be called before the previous stage
 * completed.
 */
public final class LiveTagFeed {

	private final TagEventReader reader;

	private final TagFilter filter;

	private final FeedSettings settings;

	private final Clock clock;

	private TagOffset head;

	private TagOffset sweep;

	private boolean caughtUp;

	/** Delivered events not yet passed by the sweep, for de-duplication. */
	private final TreeMap<TagOffset, Boolean> delivered = new TreeMap<>();

	LiveTagFeed(TagEventReader reader, TagFilter filter, TagOffset start, FeedSettings settings, Clock clock) {
		this.reader = reader;
		this.filter = filter;
		this.settings = settings;
		this.clock = clock;
		this.head = start;
		this.sweep = start;
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

	/** @return whether the last poll's head read reached the newest readable event */
	public synchronized boolean caughtUp() {
		return this.caughtUp;
	}

	/** @return where the head read is */
	public synchronized TagOffset headOffset() {
		return this.head;
	}

	/**
	 * Reads the next page at the head and, when the head is caught up, the trailing sweep.
	 * @return events to deliver (possibly none); late events follow the head's events
	 */
	public CompletionStage<List<TaggedEvent<String>>> poll() {
		long now = this.clock.millis();
		long backtrack = this.settings.backtrackWindow().toMillis();
		TagOffset headBefore;
		synchronized (this) {
			headBefore = this.head;
		}
		return this.reader
			.read(this.filter, this.head, now - this.settings.consistencyWindow().toMillis(), this.settings.pageSize())
			.thenCompose((page) -> {
				List<TaggedEvent<String>> out = new ArrayList<>();
				TagOffset floor;
				synchronized (this) {
					collect(page.events(), out);
					this.head = page.resumeAfter();
					this.caughtUp = page.caughtUp();
					if (backtrack == 0) {
						this.sweep = this.head;
						this.delivered.clear();
						return CompletableFuture.completedFuture(out);
					}
					// Events stamped before now - backtrack were visible when this read ran, so what this read
					// covered up to there needs no sweep. The sweep may skip ahead only if it had already reached
					// where this read started: earlier head reads may have passed events that were not visible
					// yet (they were read near real time), and those must be swept, not skipped.
					TagOffset settled = new TagOffset(Math.max(0, now - backtrack), "", 0);
					floor = (settled.compareTo(this.head) < 0) ? settled : this.head;
					if (!page.caughtUp() && this.sweep.compareTo(headBefore) >= 0) {
						if (floor.compareTo(this.sweep) > 0) {
							this.sweep = floor;
						}
						prune();
						return CompletableFuture.completedFuture(out);
					}
					if (this.sweep.compareTo(floor) >= 0) {
						prune();
						return CompletableFuture.completedFuture(out);
					}
				}
				return this.reader.read(this.filter, this.sweep, now - backtrack, this.settings.pageSize())
					.thenApply((late) -> {
						synchronized (this) {
							collect(late.events(), out);
							if (late.resumeAfter().compareTo(this.sweep) > 0) {
								this.sweep = late.resumeAfter();
							}
							if (late.caughtUp() && floor.compareTo(this.sweep) > 0) {
								this.sweep = floor;
							}
							prune();
						}
						return out;
					});
			});
	}

	private void collect(List<TaggedEvent<String>> events, List<TaggedEvent<String>> out) {
		for (TaggedEvent<String> event : events) {
			if (event.offset().compareTo(this.sweep) > 0 && this.delivered.putIfAbsent(event.offset(), Boolean.TRUE) == null) {
				out.add(event);
			}
		}
	}

	private void prune() {
		this.delivered.headMap(this.sweep, true).clear();
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
