package io.cassandrajournal.query;

import java.time.Instant;
import java.util.Objects;

/**
 * A range of a tag's events that a retention cleanup dropped from the bucketed tag index
 * ({@code JournalCleanup.dropTagBuckets}) before a query read it: the events stay in the journal (replays and
 * entity loads still see them), but tag queries and feeds no longer list them (docs/reliability.md, findings 19
 * and 22).
 *
 * @param tag the tag whose buckets were dropped
 * @param droppedBefore events of the tag stamped before this instant may be missing
 */
public record DroppedTagRange(String tag, Instant droppedBefore) {

	public DroppedTagRange {
		Objects.requireNonNull(tag, "tag");
		Objects.requireNonNull(droppedBefore, "droppedBefore");
	}

	/** @return one line for logs: the tag and the instant */
	public String describe() {
		return "events of tag '" + this.tag + "' stamped before " + this.droppedBefore
				+ " were dropped from the tag index by a retention cleanup";
	}

}
