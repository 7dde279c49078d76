package io.cassandrajournal.query;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import com.datastax.oss.driver.api.core.CqlSession;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.internal.DroppedBucketMarks;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.JournalTables;
import io.cassandrajournal.internal.RecordedLayout;
import io.cassandrajournal.internal.RawEvents;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.internal.SealConditions;
import io.cassandrajournal.internal.WarnOnce;
import io.cassandrajournal.internal.TagSlices;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * The {@link ReadJournal} over a Cassandra journal's tables. Every query is paged: memory is bounded by the page
 * size, never by the number of events.
 * <ul>
 * <li>Events by tag filter: {@link #currentEventsByTag} (finite, up to the moment it is called) and
 * {@link #liveEventsByTag} (a feed that keeps following, without missing late events).</li>
 * <li>Events by persistenceId: {@link #eventsByPersistenceId} (offset = sequence number).</li>
 * <li>persistenceIds: {@link #currentPersistenceIds} (paginated) and {@link #livePersistenceIds}.</li>
 * </ul>
 * Tag queries read the tag index ({@code useTagIndex}, bucketed or not) when the filter names at least one
 * tag an event must carry ({@code any} or {@code all}); {@code not}-only and empty filters, and every filter
 * with the index off, are answered by scanning the journal (see {@link #scansJournal}).
 * <p>
 * With a bucketed tag index, a "current" query read from the index also reads the drop mark of each tag its filter
 * names (one single-row read each, beside the page's read): a query reading from before a range a retention cleanup
 * dropped says so ({@link EventsPage#dropped()}, one WARN line per tag and range; docs/reliability.md, finding 23).
 */
public final class CassandraReadJournal implements ReadJournal {

	private static final org.slf4j.Logger logger = org.slf4j.LoggerFactory.getLogger(CassandraReadJournal.class);

	private final Journal journal;

	private final CassandraJournalOptions options;

	private final EventSerializer serializer;

	private final @Nullable TagIndexReader tagReader;

	/** The live feeds' check of late tag rows: with the tag index and an in-flight wait only. */
	private final @Nullable LateTagRows lateTagRows;

	private final JournalScanReader scanReader;

	private final java.time.Clock clock;

	/** With a bucketed tag index: how far retention dropped each tag's buckets. */
	private final @Nullable DroppedBucketMarks dropMarks;

	/** Dropped ranges queries read from before: logged once each. */
	private final WarnOnce dropWarnings = new WarnOnce(10_000);

	private CassandraReadJournal(Journal journal, CqlSession session, CassandraJournalOptions options,
			EventSerializer serializer) {
		this.journal = journal;
		this.options = options;
		this.serializer = serializer;
		this.clock = options.clock();
		this.tagReader = options.useTagIndex() ? new TagIndexReader(session, options) : null;
		// Only where a seal holds: the check makes a late row's number final by sealing it.
		this.lateTagRows = (options.useTagIndex() && SealConditions.hold(session, options))
				? new LateTagRows(session, options) : null;
		this.scanReader = new JournalScanReader(session, options);
		this.dropMarks = (options.useTagIndex() && options.tagBucketing() != TagBucketing.NONE)
				? new DroppedBucketMarks(session, options) : null;
	}

	/**
	 * @param journal the journal (for per-persistenceId reads and persistenceIds)
	 * @param session the session the journal uses
	 * @param options the journal's options: those {@code CassandraJournal.verifyLayout} returned (then the layout
	 * record is not read here); options that leave {@code slice-hash} unset make this factory look it up
	 * (a look-up in {@code system_schema.tables} and a serial read)
	 * @param serializer the journal's serializer
	 * @return the read journal
	 */
	public static CassandraReadJournal create(Journal journal, CqlSession session, CassandraJournalOptions options,
			EventSerializer serializer) {
		if (options.useTagIndex()) {
			// The index may be written by another journal implementation: make sure it exists.
			SchemaManager.ensure(session, options, JournalTables.tagIndexTables(options));
		}
		// An unset slice-hash is the keyspace's recorded one: segments and sliced reads follow it.
		return new CassandraReadJournal(Objects.requireNonNull(journal, "journal"), session,
				RecordedLayout.adopt(session, options), serializer);
	}

	/**
	 * The plan for a filter: the tag index when it is on and the filter names a tag every matching event
	 * carries; otherwise a scan of the journal (correct, but one full table scan per page).
	 * @param filter the filter
	 * @return whether queries with this filter scan the journal
	 */
	public boolean scansJournal(TagFilter filter) {
		return this.tagReader == null || !filter.hasPositiveTag();
	}

	private TagEventReader checkTagQuery(TagFilter filter) {
		Objects.requireNonNull(filter, "filter");
		return scansJournal(filter) ? this.scanReader : this.tagReader;
	}

	/**
	 * One page of events matching a filter, after an offset, up to now.
	 * @param <E> the payload type
	 * @param filter the filter
	 * @param after the offset to continue after ({@link TagOffset#START} for the beginning)
	 * @param limit rows to examine at most
	 * @param type the payload type
	 * @return the page; continue from {@link EventsPage#resumeAfter()} until {@link EventsPage#caughtUp()}
	 */
	@Override
	public <E> CompletionStage<EventsPage<E>> currentEventsByTag(TagFilter filter, TagOffset after, int limit,
			Class<E> type) {
		TagEventReader reader;
		try {
			reader = checkTagQuery(filter);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		CompletionStage<@Nullable DroppedTagRange> dropped = droppedAfter(reader, filter, after);
		return Errors.translating(reader.read(filter, after, this.clock.millis(), limit).thenCombine(dropped, (page, d) -> {
			List<TaggedEvent<E>> events = new ArrayList<>(page.events().size());
			for (TaggedEvent<String> raw : page.events()) {
				for (PersistentEvent<E> event : RawEvents.deserialize(raw.event(), this.serializer, type)) {
					events.add(new TaggedEvent<>(raw.offset(), event));
				}
			}
			return new EventsPage<>(events, page.resumeAfter(), page.caughtUp(), d);
		}), "Tag query", filter.canonical());
	}

	/**
	 * Visits every event matching a filter after an offset and stamped up to the moment of the call (the finite
	 * "current" form). A filter read from one tag's index partitions ({@code all} tags, or one {@code any} tag) is
	 * streamed: one read per partition following the driver's paging state, the next page fetched while the
	 * current one is delivered (two pages in memory); other filters are read page by page.
	 * @param <E> the payload type
	 * @param filter the filter
	 * @param after where to start
	 * @param type the payload type
	 * @param consumer called once per event, in offset order, on a driver thread
	 * @return the offset after the last examined row
	 */
	public <E> CompletionStage<TagOffset> forEachCurrentEventByTag(TagFilter filter, TagOffset after, Class<E> type,
			Consumer<? super TaggedEvent<E>> consumer) {
		TagEventReader reader;
		try {
			reader = checkTagQuery(filter);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		long upper = this.clock.millis();
		// Reported in the log only (the call returns an offset): read beside the events, not before them.
		CompletionStage<@Nullable DroppedTagRange> dropped = droppedAfter(reader, filter, after);
		return Errors.translating(visit(reader, filter, after, upper, type, consumer)
			.thenCombine(dropped, (offset, d) -> offset), "Tag query", filter.canonical());
	}

	private <E> CompletionStage<TagOffset> visit(TagEventReader reader, TagFilter filter, TagOffset after, long upper,
			Class<E> type, Consumer<? super TaggedEvent<E>> consumer) {
		if (reader == this.tagReader && this.tagReader.streams(filter)) {
			// One tag's partitions: one streamed read each, following the driver's paging state.
			return this.tagReader.forEach(filter, after, upper, (offset, tags, payload) -> {
				for (E part : RawEvents.payloads(offset.persistenceId(), offset.sequenceNr(), payload, this.serializer,
						type)) {
					consumer.accept(new TaggedEvent<>(offset, new PersistentEvent<>(offset.persistenceId(),
							offset.sequenceNr(), Instant.ofEpochMilli(offset.timestamp()), tags, part)));
				}
			});
		}
		return walk(reader, filter, after, upper, type, consumer);
	}

	/**
	 * Whether a query read from the tag index after {@code after} starts before a range retention dropped from it
	 * (bucketed tag index only): the drop mark of every tag the filter names, read at once (one single-row read
	 * each); every tag whose mark lies after the offset is logged (once per tag and range), the first is returned.
	 * Never fails: a mark that cannot be read counts as none ({@link #markOrEmpty}).
	 */
	private CompletionStage<@Nullable DroppedTagRange> droppedAfter(TagEventReader reader, TagFilter filter,
			TagOffset after) {
		DroppedBucketMarks marks = this.dropMarks;
		if (marks == null || reader != this.tagReader) {
			// A scan reads the events table, which a bucket drop leaves as it was.
			return CompletableFuture.completedFuture(null);
		}
		LinkedHashSet<String> named = new LinkedHashSet<>(filter.anyTags());
		named.addAll(filter.allTags());
		List<String> tags = List.copyOf(named);
		List<CompletableFuture<Optional<Instant>>> reads = new ArrayList<>(tags.size());
		for (String tag : tags) {
			reads.add(marks.droppedBefore(tag).toCompletableFuture());
		}
		return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).handle((ignored, error) -> {
			DroppedTagRange first = null;
			for (int i = 0; i < tags.size(); i++) {
				Optional<Instant> mark = markOrEmpty(filter, tags.get(i), reads.get(i));
				if (mark.isPresent() && after.timestamp() < mark.get().toEpochMilli()) {
					DroppedTagRange dropped = new DroppedTagRange(tags.get(i), mark.get());
					if (this.dropWarnings.first(dropped.tag() + "#" + dropped.droppedBefore())) {
						logger.warn("Tag query '{}' reads from {}, before a dropped range: {} (JournalCleanup.dropTagBuckets); "
								+ "they stay in the journal but are not in this query's result (docs/reliability.md, finding 23)",
								filter.canonical(), Instant.ofEpochMilli(after.timestamp()), dropped.describe());
					}
					first = (first != null) ? first : dropped;
				}
			}
			return first;
		});
	}

	/**
	 * A tag's drop mark, or none if its read failed: the mark is diagnostic, so a failed read costs the query its
	 * report, not its result (finding 23, Review, item 1; a streamed query would otherwise fail after delivering its
	 * events, and a caller that retried would handle them twice). Logged at WARN once per tag, then at DEBUG.
	 */
	private Optional<Instant> markOrEmpty(TagFilter filter, String tag, CompletableFuture<Optional<Instant>> read) {
		try {
			return read.join();
		}
		catch (RuntimeException ex) {
			Throwable cause = (ex instanceof java.util.concurrent.CompletionException && ex.getCause() != null)
					? ex.getCause() : ex;
			if (this.dropWarnings.first("failed#" + tag)) {
				logger.warn("Tag query '{}': reading the drop mark of tag '{}' failed ({}); the query's result is "
						+ "complete, but it cannot tell whether it reads from before a range a retention cleanup dropped "
						+ "(logged once per tag, then at DEBUG)", filter.canonical(), tag, cause.toString());
			}
			else {
				logger.debug("Tag query '{}': reading the drop mark of tag '{}' failed ({})", filter.canonical(), tag,
						cause.toString());
			}
			return Optional.empty();
		}
	}

	private <E> CompletionStage<TagOffset> walk(TagEventReader reader, TagFilter filter, TagOffset after, long upper,
			Class<E> type, Consumer<? super TaggedEvent<E>> consumer) {
		return reader.read(filter, after, upper, this.options.pageSize()).thenCompose((page) -> {
			for (TaggedEvent<String> raw : page.events()) {
				for (PersistentEvent<E> event : RawEvents.deserialize(raw.event(), this.serializer, type)) {
					consumer.accept(new TaggedEvent<>(raw.offset(), event));
				}
			}
			return page.caughtUp() ? CompletableFuture.completedFuture(page.resumeAfter())
					: walk(reader, filter, page.resumeAfter(), upper, type, consumer);
		});
	}

	/**
	 * A live feed of the events matching a filter (see {@link FeedSettings} for what it guarantees).
	 * @param filter the filter
	 * @param start the offset to start after
	 * @param settings the feed's windows and page size
	 * @return the feed
	 */
	@Override
	public LiveTagFeed liveEventsByTag(TagFilter filter, TagOffset start, FeedSettings settings) {
		if (scansJournal(filter)) {
			logger.warn("The live feed of tag filter '{}' scans the whole {} table on every poll ({}); for a busy "
					+ "journal give the filter an 'any' or 'all' tag and turn the tag index on (property "
					+ "journal.cassandra.use-tag-index=true, option useTagIndex, on every instance, then backfill)",
					filter.canonical(), this.options.eventsTable(),
					(this.tagReader == null) ? "the tag index is off: journal.cassandra.use-tag-index=false"
							: "the filter names no tag every match carries");
		}
		TagEventReader reader = checkTagQuery(filter);
		// A scan reads the events table itself: a sealed event is not in it. Index rows are checked when read late.
		LateTagRows lateRows = (reader == this.tagReader) ? this.lateTagRows : null;
		return watchingDrops(new LiveTagFeed(reader, filter, start, settings, this.clock, this.options.inFlightWait(),
				(lateRows != null) ? lateRows::absent : null));
	}

	/**
	 * A live feed of the events of a slice range matching a filter. With the segment-aware tag index on
	 * ({@link CassandraJournalOptions#tagSliceGroups()}) and a filter the index answers, it reads only the
	 * partitions of the range's slice groups and returns only the range's events; otherwise it is the feed of
	 * the whole filter (see {@link ReadJournal#liveEventsByTag(TagFilter, TagOffset, FeedSettings, int, int)}).
	 */
	@Override
	public LiveTagFeed liveEventsByTag(TagFilter filter, TagOffset start, FeedSettings settings, int fromSlice,
			int toSlice) {
		TagIndexReader whole = this.tagReader;
		int groups = this.options.tagSliceGroups();
		boolean everySlice = fromSlice == 0 && toSlice == TagSlices.SLICES - 1;
		if (whole == null || groups == 0 || everySlice || scansJournal(filter)) {
			return liveEventsByTag(filter, start, settings);
		}
		if (fromSlice < 0 || toSlice >= TagSlices.SLICES || fromSlice > toSlice) {
			throw new IllegalArgumentException(
					"Slice range " + fromSlice + "-" + toSlice + " is not within 0-" + (TagSlices.SLICES - 1));
		}
		return watchingDrops(new LiveTagFeed(whole.slices(fromSlice, toSlice, groups), filter, start, settings,
				this.clock, this.options.inFlightWait(), (this.lateTagRows != null) ? this.lateTagRows::absent : null));
	}

	/** A feed over the bucketed tag index is told the ranges a cleanup dropped (finding 30). */
	private LiveTagFeed watchingDrops(LiveTagFeed feed) {
		return (this.dropMarks != null) ? feed.watchingDrops(this::tagDroppedBefore) : feed;
	}

	/** The options' {@link CassandraJournalOptions#sliceHash() slice function}: the sliced index is written by it. */
	@Override
	public int sliceOf(String persistenceId) {
		return this.options.sliceHash().slice(persistenceId);
	}

	/**
	 * @return a live stream of persistenceIds: its first polls return every known id, later polls the ids
	 * that appeared since
	 */
	@Override
	public LivePersistenceIds livePersistenceIds() {
		return new LivePersistenceIds(this.journal, this.options.pageSize());
	}

	/**
	 * How far a retention cleanup dropped the tag's buckets ({@code JournalCleanup.dropTagBuckets}; bucketed tag
	 * index only): one single-row read.
	 * @param tag the tag
	 * @return events of the tag stamped before this instant may have been dropped; empty if none were
	 */
	@Override
	public CompletionStage<Optional<Instant>> tagDroppedBefore(String tag) {
		DroppedBucketMarks marks = this.dropMarks;
		return (marks == null) ? CompletableFuture.completedFuture(Optional.empty())
				: Errors.translating(marks.droppedBefore(tag), "Reading the dropped buckets of tag", tag);
	}

	/** @return the journal this reads */
	@Override
	public Journal journal() {
		return this.journal;
	}

	/** @return the serializer payloads are read with */
	@Override
	public EventSerializer serializer() {
		return this.serializer;
	}

}
