package io.cassandrajournal.query;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * The query side of a journal: events by tag filter (finite and live), events by persistenceId, and
 * persistenceIds. The projection engine depends on this interface only, so projections run over any
 * implementation: {@link CassandraReadJournal} over the Cassandra tables, or {@link #replaying} over any
 * {@link Journal} (the in-memory one for tests and local runs).
 */
public interface ReadJournal {

	/**
	 * A read journal that answers tag queries by replaying every persistenceId of a journal on each page: for
	 * an in-memory journal (see {@code InMemoryJournal#readJournal()}) and tests, not for a large journal.
	 * @param journal the journal
	 * @param serializer the serializer its payloads are read with
	 * @param clock the clock that bounds "current" queries
	 * @return the read journal
	 */
	static ReadJournal replaying(Journal journal, EventSerializer serializer, Clock clock) {
		return new ReplayingReadJournal(journal, serializer, clock);
	}

	/**
	 * One page of events matching a filter, after an offset, up to now. An event an upcaster split gives
	 * several entries with the stored event's offset.
	 * @param <E> the payload type
	 * @param filter the filter
	 * @param after the offset to continue after ({@link TagOffset#START} for the beginning)
	 * @param limit rows to examine at most
	 * @param type the payload type
	 * @return the page; continue from {@link EventsPage#resumeAfter()} until {@link EventsPage#caughtUp()}
	 */
	<E> CompletionStage<EventsPage<E>> currentEventsByTag(TagFilter filter, TagOffset after, int limit, Class<E> type);

	/**
	 * A live feed of the events matching a filter (see {@link FeedSettings} for what it guarantees).
	 * @param filter the filter
	 * @param start the offset to start after
	 * @param settings the feed's windows and page size
	 * @return the feed
	 */
	LiveTagFeed liveEventsByTag(TagFilter filter, TagOffset start, FeedSettings settings);

	/**
	 * A live feed for one segment of a projection shared by instances: the events matching a filter whose
	 * persistenceIds fall in a slice range ({@link #sliceOf}, the slice function of the projection segments). With the segment-aware tag index on ({@code tag-slice-groups}), the Cassandra read
	 * journal reads only the partitions of the range's slice groups; otherwise (the default) this is the feed of
	 * the whole filter, and the caller keeps the range's events itself. Offsets are the same as the whole feed's,
	 * so a cursor moves between the two.
	 * @param filter the filter
	 * @param start the offset to start after
	 * @param settings the feed's windows and page size
	 * @param fromSlice the first slice, inclusive (0 to 1023)
	 * @param toSlice the last slice, inclusive
	 * @return the feed; it may deliver events of other slices, which the caller drops
	 */
	default LiveTagFeed liveEventsByTag(TagFilter filter, TagOffset start, FeedSettings settings, int fromSlice,
			int toSlice) {
		return liveEventsByTag(filter, start, settings);
	}

	/**
	 * The slice function of this read journal's slice ranges: projection segments keep the events of their range
	 * by it, so it must be the one the journal's rows were laid out by. The Cassandra read journal uses its
	 * options' {@link CassandraJournalOptions#sliceHash()} (recorded with the keyspace's layout); the default is
	 * {@link SliceHash#MURMUR3}, the default for new keyspaces.
	 * @param persistenceId an entity
	 * @return its slice, 0 to 1023
	 */
	default int sliceOf(String persistenceId) {
		return SliceHash.MURMUR3.slice(persistenceId);
	}

	/**
	 * A page of one persistenceId's events (the live form polls it again from the last sequence number).
	 * @param <E> the payload type
	 * @param persistenceId the entity
	 * @param fromSequenceNr the first sequence number wanted
	 * @param limit how many at most
	 * @param type the payload type
	 * @return the events, in order
	 */
	default <E> CompletionStage<List<PersistentEvent<E>>> eventsByPersistenceId(String persistenceId,
			long fromSequenceNr, int limit, Class<E> type) {
		List<PersistentEvent<E>> events = new ArrayList<>();
		long to = (Long.MAX_VALUE - fromSequenceNr < limit) ? Long.MAX_VALUE : fromSequenceNr + limit - 1;
		return journal().replay(persistenceId, fromSequenceNr, to, type, events::add).thenApply((last) -> events);
	}

	/**
	 * @param afterId the last id of the previous page, or {@code null}
	 * @param limit the page size
	 * @return the next page of persistenceIds, ascending; shorter than {@code limit} only at the end
	 */
	default CompletionStage<List<String>> currentPersistenceIds(@Nullable String afterId, int limit) {
		return journal().persistenceIds(afterId, limit);
	}

	/**
	 * @return a live stream of persistenceIds: its first polls return every known id, later polls the ids
	 * that appeared since
	 */
	LivePersistenceIds livePersistenceIds();

	/**
	 * How far a retention cleanup dropped a tag's index (bucketed tag index only; docs/reliability.md, finding 19):
	 * a tag query or feed reading from before the returned instant may miss events stamped before it.
	 * @param tag the tag
	 * @return the end of the newest bucket dropped, or empty if none was (the default: nothing is dropped)
	 */
	default CompletionStage<Optional<Instant>> tagDroppedBefore(String tag) {
		return CompletableFuture.completedFuture(Optional.empty());
	}

	/** @return the journal this reads */
	Journal journal();

	/** @return the serializer payloads are read with */
	EventSerializer serializer();

}
