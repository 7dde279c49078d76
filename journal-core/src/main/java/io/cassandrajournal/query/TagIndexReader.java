package io.cassandrajournal.query;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.internal.RowValues;
import io.cassandrajournal.internal.TagPartitions;
import io.cassandrajournal.internal.TagSlices;
import io.cassandrajournal.journal.PersistentEvent;

/**
 * Reads the tag index. Plans: a filter with {@code all} tags walks the partition of one of them and
 * refines rows with the whole filter (the row carries every tag of the event); a filter with only
 * {@code any} tags walks each tag's partition, merges them in offset order and drops duplicates (an event
 * carrying two of the tags is in both partitions). Each page is one bounded read per walked partition. A reader
 * of a slice range ({@link #slices}) walks, per tag, the segment-aware index's partitions of the range's slice
 * groups instead, merged the same way.
 */
final class TagIndexReader implements TagEventReader {

	private final TagPartitions partitions;

	/** Where reads of a slice range go: the segment-aware index's groups; {@code null} for the whole tag. */
	private final @Nullable Slices slices;

	/** A slice range and the segment-aware index's groups that hold it. */
	private record Slices(SliceHash hash, int fromSlice, int toSlice, int firstGroup, int lastGroup) {

		boolean contains(String persistenceId) {
			int slice = TagSlices.sliceOf(this.hash, persistenceId);
			return slice >= this.fromSlice && slice <= this.toSlice;
		}

	}

	/** The keyspace's slice function: which slice an entity's rows belong to. */
	private final SliceHash hash;

	public TagIndexReader(CqlSession session, CassandraJournalOptions options) {
		this.partitions = TagPartitions.create(session, options);
		this.hash = options.sliceHash();
		this.slices = null;
	}

	private TagIndexReader(TagPartitions partitions, SliceHash hash, Slices slices) {
		this.partitions = partitions;
		this.hash = hash;
		this.slices = slices;
	}

	/**
	 * A reader of the events of a slice range only, from the segment-aware index's partitions of the groups that
	 * hold the range (merged in offset order); rows of other slices in those groups (a range smaller than a group)
	 * are examined and not returned.
	 * @param fromSlice the first slice, inclusive
	 * @param toSlice the last slice, inclusive
	 * @param groups the index's slice groups
	 * @return the reader
	 */
	TagIndexReader slices(int fromSlice, int toSlice, int groups) {
		return new TagIndexReader(this.partitions, this.hash, new Slices(this.hash, fromSlice, toSlice,
				TagSlices.firstGroup(fromSlice, toSlice, groups), TagSlices.lastGroup(fromSlice, toSlice, groups)));
	}

	@Override
	public CompletionStage<EventsPage<String>> read(TagFilter filter, TagOffset after, long upperTimestamp,
			int limit) {
		List<String> walked = filter.allTags().isEmpty() ? List.copyOf(filter.anyTags())
				: List.of(filter.allTags().iterator().next());
		List<CompletableFuture<List<Row>>> reads = new ArrayList<>();
		Slices range = this.slices;
		for (String tag : walked) {
			if (range == null) {
				reads.add(this.partitions.rows(tag, after, upperTimestamp, limit).toCompletableFuture());
				continue;
			}
			for (int group = range.firstGroup(); group <= range.lastGroup(); group++) {
				reads.add(this.partitions.groupRows(tag, group, after, upperTimestamp, limit).toCompletableFuture());
			}
		}
		return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new))
			.thenApply((ignored) -> merge(filter, after, reads.stream().map(CompletableFuture::join).toList(), limit));
	}

	/** One index row that matched the filter. */
	@FunctionalInterface
	interface MatchConsumer {

		void accept(TagOffset offset, java.util.Set<String> tags, String payload);

	}

	/**
	 * @param filter the filter
	 * @return whether {@link #forEach} can walk it: it reads one tag's partitions ({@code all} tags, or a
	 * single {@code any} tag)
	 */
	boolean streams(TagFilter filter) {
		return this.slices == null && (!filter.allTags().isEmpty() || filter.anyTags().size() == 1);
	}

	/**
	 * Visits every matching event after an offset up to an upper time stamp, in offset order, streaming the
	 * walked tag's rows (see {@link TagPartitions#forEachRow}) rather than a fresh bounded read per page.
	 * @param filter a filter that {@link #streams}
	 * @param after the offset to start after
	 * @param upperTimestamp the newest time stamp to read
	 * @param consumer called once per matching row
	 * @return the offset of the last examined row (matching or not), {@code after} if there was none
	 */
	CompletionStage<TagOffset> forEach(TagFilter filter, TagOffset after, long upperTimestamp, MatchConsumer consumer) {
		String tag = filter.allTags().isEmpty() ? filter.anyTags().iterator().next() : filter.allTags().iterator().next();
		TagOffset[] last = { after };
		return this.partitions.forEachRow(tag, after, upperTimestamp, (row) -> {
			TagOffset offset = offsetOf(row);
			last[0] = offset;
			java.util.Set<String> tags = RowValues.textSet(row, 4);
			if (filter.matches(tags)) {
				String payload = RowValues.text(row, 3);
				consumer.accept(offset, tags, (payload != null) ? payload : "null");
			}
		}).thenApply((ignored) -> last[0]);
	}

	private EventsPage<String> merge(TagFilter filter, TagOffset after, List<List<Row>> streams, int limit) {
		if (streams.size() == 1) {
			return single(filter, after, streams.get(0), limit);
		}
		// Rows up to the smallest last offset of any full stream are complete in every stream. A stream shorter
		// than the limit is complete up to the upper bound: TagPartitions reads every page up to the LIMIT.
		TagOffset cut = null;
		for (List<Row> rows : streams) {
			if (rows.size() == limit) {
				TagOffset last = offsetOf(rows.get(rows.size() - 1));
				cut = (cut == null || last.compareTo(cut) < 0) ? last : cut;
			}
		}
		Map<TagOffset, Row> merged = new LinkedHashMap<>();
		List<Map.Entry<TagOffset, Row>> all = new ArrayList<>();
		streams.forEach((rows) -> rows.forEach((row) -> all.add(Map.entry(offsetOf(row), row))));
		all.sort(Map.Entry.comparingByKey());
		TagOffset resume = after;
		for (Map.Entry<TagOffset, Row> entry : all) {
			TagOffset offset = entry.getKey();
			Row row = entry.getValue();
			if (cut != null && offset.compareTo(cut) > 0) {
				break;
			}
			merged.putIfAbsent(offset, row);
			resume = offset;
		}
		List<TaggedEvent<String>> events = new ArrayList<>();
		for (Map.Entry<TagOffset, Row> entry : merged.entrySet()) {
			Row row = entry.getValue();
			java.util.Set<String> tags = RowValues.textSet(row, 4);
			if (filter.matches(tags) && inSlices(entry.getKey())) {
				String payload = RowValues.text(row, 3);
				events.add(new TaggedEvent<>(entry.getKey(), new PersistentEvent<>(entry.getKey().persistenceId(),
						entry.getKey().sequenceNr(), Instant.ofEpochMilli(entry.getKey().timestamp()), tags,
						(payload != null) ? payload : "null")));
			}
		}
		return new EventsPage<>(events, resume, cut == null);
	}

	/** One walked partition: rows are already in offset order and unique. */
	private EventsPage<String> single(TagFilter filter, TagOffset after, List<Row> rows, int limit) {
		List<TaggedEvent<String>> events = new ArrayList<>(rows.size());
		TagOffset resume = after;
		for (Row row : rows) {
			TagOffset offset = offsetOf(row);
			resume = offset;
			java.util.Set<String> tags = RowValues.textSet(row, 4);
			if (filter.matches(tags) && inSlices(offset)) {
				String payload = RowValues.text(row, 3);
				events.add(new TaggedEvent<>(offset, new PersistentEvent<>(offset.persistenceId(), offset.sequenceNr(),
						Instant.ofEpochMilli(offset.timestamp()), tags, (payload != null) ? payload : "null")));
			}
		}
		return new EventsPage<>(events, resume, rows.size() < limit);
	}

	private boolean inSlices(TagOffset offset) {
		Slices range = this.slices;
		return range == null || range.contains(offset.persistenceId());
	}

	private static TagOffset offsetOf(Row row) {
		// Columns of TagPartitions.COLUMNS: timestamp, persistence_id, sequence_nr, payload, tags.
		return new TagOffset(RowValues.bigint(row, 0), RowValues.text(row, 1), RowValues.bigint(row, 2));
	}

}
