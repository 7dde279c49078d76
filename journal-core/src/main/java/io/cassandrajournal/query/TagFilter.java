package io.cassandrajournal.query;

import java.util.Collection;
import java.util.Collections;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * Which events a tag query selects: {@code any} (at least one of), {@code all} (every one of) and
 * {@code not} (none of), ANDed; an empty filter matches every event.
 * <p>
 * The {@linkplain #canonical() canonical form} is part of a projection's cursor identity, as in the
 * reference: {@code TagFilter.tag("orders")} is {@code orders}, while {@code TagFilter.all("orders")} is
 * {@code all(orders)}. They select the same events but keep separate cursors, so switching spelling replays
 * the projection from the start. Choose one spelling before a projection first runs.
 */
public final class TagFilter {

	private final SortedSet<String> any;

	private final SortedSet<String> all;

	private final SortedSet<String> not;

	private final boolean plain;

	private TagFilter(Collection<String> any, Collection<String> all, Collection<String> not, boolean plain) {
		this.any = checked("any", any);
		this.all = checked("all", all);
		this.not = checked("not", not);
		this.plain = plain;
	}

	/**
	 * @param tag one tag
	 * @return the plain single-tag filter, canonical form {@code tag}
	 */
	public static TagFilter tag(String tag) {
		return new TagFilter(Set.of(), Set.of(tag), Set.of(), true);
	}

	/**
	 * @param any events with at least one of these tags (may be empty)
	 * @param all events with every one of these tags (may be empty)
	 * @param not events with none of these tags (may be empty)
	 * @return the filter
	 */
	public static TagFilter of(Collection<String> any, Collection<String> all, Collection<String> not) {
		return new TagFilter(any, all, not, false);
	}

	/**
	 * @param tags the tags
	 * @return events with at least one of them
	 */
	public static TagFilter any(String... tags) {
		return of(Set.of(tags), Set.of(), Set.of());
	}

	/**
	 * @param tags the tags
	 * @return events with all of them
	 */
	public static TagFilter all(String... tags) {
		return of(Set.of(), Set.of(tags), Set.of());
	}

	/**
	 * @param tags the tags to exclude
	 * @return this filter, also excluding events with any of these tags
	 */
	public TagFilter andNot(String... tags) {
		Set<String> excluded = new TreeSet<>(this.not);
		Collections.addAll(excluded, tags);
		return new TagFilter(this.any, this.all, excluded, false);
	}

	/** @return the {@code any} tags */
	public Set<String> anyTags() {
		return this.any;
	}

	/** @return the {@code all} tags */
	public Set<String> allTags() {
		return this.all;
	}

	/** @return the {@code not} tags */
	public Set<String> notTags() {
		return this.not;
	}

	/**
	 * @param tags an event's tags
	 * @return whether the event is selected
	 */
	public boolean matches(Set<String> tags) {
		// Loops, not streams: this runs per event of every tag read (a stream per call showed in the profile).
		if (!this.any.isEmpty() && !containsAny(tags, this.any)) {
			return false;
		}
		for (String tag : this.all) {
			if (!tags.contains(tag)) {
				return false;
			}
		}
		return this.not.isEmpty() || !containsAny(tags, this.not);
	}

	private static boolean containsAny(Set<String> tags, Set<String> wanted) {
		for (String tag : wanted) {
			if (tags.contains(tag)) {
				return true;
			}
		}
		return false;
	}

	/** @return whether the filter names at least one tag an event must carry ({@code any} or {@code all}) */
	public boolean hasPositiveTag() {
		return !this.any.isEmpty() || !this.all.isEmpty();
	}

	/**
	 * @return the canonical text: the tag itself for {@link #tag(String)}; otherwise the non-empty parts
	 * {@code any(a,b)}, {@code all(c)}, {@code not(d)} in that order, tags sorted, joined by {@code " "};
	 * {@code *} for the empty filter
	 */
	public String canonical() {
		if (this.plain) {
			return this.all.first();
		}
		StringBuilder text = new StringBuilder();
		append(text, "any", this.any);
		append(text, "all", this.all);
		append(text, "not", this.not);
		return text.isEmpty() ? "*" : text.toString();
	}

	private static void append(StringBuilder text, String operator, SortedSet<String> tags) {
		if (tags.isEmpty()) {
			return;
		}
		if (!text.isEmpty()) {
			text.append(' ');
		}
		text.append(operator).append('(').append(String.join(",", tags)).append(')');
	}

	private static SortedSet<String> checked(String name, Collection<String> tags) {
		Objects.requireNonNull(tags, name);
		SortedSet<String> sorted = new TreeSet<>();
		for (String tag : tags) {
			if (tag == null || tag.isBlank() || tag.contains("(") || tag.contains(")") || tag.contains(",")) {
				throw new IllegalArgumentException(name + " tags must be non-blank and free of '(', ')' and ',': " + tags);
			}
			sorted.add(tag);
		}
		return Collections.unmodifiableSortedSet(sorted);
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof TagFilter that && canonical().equals(that.canonical());
	}

	@Override
	public int hashCode() {
		return canonical().hashCode();
	}

	@Override
	public String toString() {
		return canonical();
	}

}
