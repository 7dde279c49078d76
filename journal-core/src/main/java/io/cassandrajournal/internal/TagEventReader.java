package io.cassandrajournal.internal;

import java.util.concurrent.CompletionStage;

import io.cassandrajournal.query.EventsPage;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;

/**
 * Reads pages of the events matching a tag filter in offset order: from the tag index
 * ({@link TagIndexReader}) or, without a usable index, by scanning the journal ({@link JournalScanReader}).
 */
public interface TagEventReader {

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
