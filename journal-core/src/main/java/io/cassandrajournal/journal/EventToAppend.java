package io.cassandrajournal.journal;

import java.util.Objects;
import java.util.Set;

/**
 * One event to append, with the tags it is indexed under.
 *
 * @param payload the event; serialized to JSON by the journal's
 * {@link io.cassandrajournal.serialization.EventSerializer}
 * @param tags the event's tags (may be empty)
 */
public record EventToAppend(Object payload, Set<String> tags) {

	public EventToAppend {
		Objects.requireNonNull(payload, "payload");
		tags = Set.copyOf(Objects.requireNonNull(tags, "tags"));
		for (String tag : tags) {
			if (tag.isBlank()) {
				throw new IllegalArgumentException("tags must not be blank: " + tags);
			}
		}
	}

	/**
	 * @param payload the event
	 * @param tags its tags
	 * @return the event to append
	 */
	public static EventToAppend of(Object payload, String... tags) {
		return new EventToAppend(payload, Set.of(tags));
	}

}
