package io.cassandrajournal.query;

import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * One page of a tag query.
 *
 * @param <E> the payload type
 * @param events the matching events, in offset order
 * @param resumeAfter where the next page starts: the last offset examined, which may be past the last
 * matching event when the filter refined rows away
 * @param caughtUp whether the read reached the upper bound (no more rows now)
 * @param dropped set when the page was read from before a range a retention cleanup dropped from the bucketed tag
 * index ({@code JournalCleanup.dropTagBuckets}): events of that tag stamped before its instant may be missing from
 * this page and the ones after it (the events themselves stay in the journal); {@code null} otherwise
 */
public record EventsPage<E>(List<TaggedEvent<E>> events, TagOffset resumeAfter, boolean caughtUp,
		@Nullable DroppedTagRange dropped) {

	public EventsPage {
		events = List.copyOf(events);
	}

	/**
	 * A page read from after every dropped range (or of a journal that drops none).
	 * @param events see the record
	 * @param resumeAfter see the record
	 * @param caughtUp see the record
	 */
	public EventsPage(List<TaggedEvent<E>> events, TagOffset resumeAfter, boolean caughtUp) {
		this(events, resumeAfter, caughtUp, null);
	}

}
