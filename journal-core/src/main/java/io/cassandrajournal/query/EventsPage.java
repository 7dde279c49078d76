package io.cassandrajournal.query;

import java.util.List;

/**
 * One page of a tag query.
 *
 * @param <E> the payload type
 * @param events the matching events, in offset order
 * @param resumeAfter where the next page starts: the last offset examined, which may be past the last
 * matching event when the filter refined rows away
 * @param caughtUp whether the read reached the upper bound (no more rows now)
 */
public record EventsPage<E>(List<TaggedEvent<E>> events, TagOffset resumeAfter, boolean caughtUp) {

	public EventsPage {
		events = List.copyOf(events);
	}

}
