package io.cassandrajournal.query;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;

/**
 * Keeps the {@code limit} events with the smallest offsets after a cursor out of events offered in any order,
 * in memory bounded by the limit. Where this fits: the readers that scan instead of reading an index
 * ({@link JournalScanReader}, {@link ReplayingReadJournal}) build one page with it.
 */
final class SmallestOffsets {

	private static final Comparator<TaggedEvent<String>> NEWEST_FIRST = Comparator
		.comparing((TaggedEvent<String> event) -> event.offset())
		.reversed();

	private final TagOffset after;

	private final int limit;

	private final PriorityQueue<TaggedEvent<String>> smallest;

	private boolean overflow;

	SmallestOffsets(TagOffset after, int limit) {
		this.after = after;
		this.limit = limit;
		this.smallest = new PriorityQueue<>(limit + 1, NEWEST_FIRST);
	}

	/** @return whether an event at this offset may be kept (it is after the cursor and small enough) */
	boolean wants(TagOffset offset) {
		if (offset.compareTo(this.after) <= 0) {
			return false;
		}
		if (this.smallest.size() == this.limit) {
			this.overflow = true;
			return offset.compareTo(this.smallest.peek().offset()) < 0;
		}
		return true;
	}

	/** Keeps an event {@link #wants} accepted, dropping the largest kept one when full. */
	void add(TaggedEvent<String> event) {
		if (this.smallest.size() == this.limit) {
			this.smallest.poll();
		}
		this.smallest.add(event);
	}

	/** @return the kept events in offset order; caught up unless an event was left out for the limit */
	EventsPage<String> page() {
		List<TaggedEvent<String>> events = new ArrayList<>(this.smallest);
		events.sort(Comparator.comparing(TaggedEvent::offset));
		TagOffset resume = events.isEmpty() ? this.after : events.get(events.size() - 1).offset();
		return new EventsPage<>(events, resume, !this.overflow);
	}

}
