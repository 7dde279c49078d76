package io.cassandrajournal.query;

import java.util.concurrent.CompletionStage;

/**
 * Reads pages of the events matching a tag filter in offset order: from the tag index
 * ({@link TagIndexReader}) or, without a usable index, by scanning the journal ({@link JournalScanReader}).
 */
interface TagEventReader {

	/**
	 * @param filter the filter
	 * @param after the offset to read after
	 * @param upperTimestamp the newest time stamp to read
	 * @param limit rows to examine at most
	 * @return a page whose payloads are the stored JSON text, not yet deserialized (so that one bad payload
	 * fails only its own event, where a projection's recovery strategy can deal with it)
	 */
	CompletionStage<EventsPage<String>> read(TagFilter filter, TagOffset after, long upperTimestamp, int limit);

}
