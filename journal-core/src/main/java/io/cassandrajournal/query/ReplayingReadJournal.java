package io.cassandrajournal.query;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.internal.RawEvents;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * A {@link ReadJournal} over any {@link Journal}: each tag page replays every persistenceId and keeps the
 * {@code limit} smallest matching offsets after the cursor (the in-memory counterpart of
 * {@link JournalScanReader}). Where this fits: {@link ReadJournal#replaying} makes it, for the in-memory
 * journal and tests.
 */
final class ReplayingReadJournal implements ReadJournal, TagEventReader {

	private static final int ID_PAGE = 100;

	private final Journal journal;

	private final EventSerializer serializer;

	private final Clock clock;

	ReplayingReadJournal(Journal journal, EventSerializer serializer, Clock clock) {
		this.journal = Objects.requireNonNull(journal, "journal");
		this.serializer = Objects.requireNonNull(serializer, "serializer");
		this.clock = Objects.requireNonNull(clock, "clock");
	}

	@Override
	public <E> CompletionStage<EventsPage<E>> currentEventsByTag(TagFilter filter, TagOffset after, int limit,
			Class<E> type) {
		Objects.requireNonNull(filter, "filter");
		return read(filter, after, this.clock.millis(), limit).thenApply((page) -> {
			List<TaggedEvent<E>> events = new ArrayList<>(page.events().size());
			for (TaggedEvent<String> raw : page.events()) {
				for (PersistentEvent<E> event : RawEvents.deserialize(raw.event(), this.serializer, type)) {
					events.add(new TaggedEvent<>(raw.offset(), event));
				}
			}
			return new EventsPage<>(events, page.resumeAfter(), page.caughtUp());
		});
	}

	@Override
	public LiveTagFeed liveEventsByTag(TagFilter filter, TagOffset start, FeedSettings settings) {
		return new LiveTagFeed(this, Objects.requireNonNull(filter, "filter"), start, settings, this.clock);
	}

	@Override
	public LivePersistenceIds livePersistenceIds() {
		return new LivePersistenceIds(this.journal, ID_PAGE);
	}

	@Override
	public Journal journal() {
		return this.journal;
	}

	@Override
	public EventSerializer serializer() {
		return this.serializer;
	}

	@Override
	public CompletionStage<EventsPage<String>> read(TagFilter filter, TagOffset after, long upperTimestamp, int limit) {
		SmallestOffsets smallest = new SmallestOffsets(after, limit);
		return scan(null, (event) -> {
			TagOffset offset = new TagOffset(event.timestamp().toEpochMilli(), event.persistenceId(), event.sequenceNr());
			if (offset.timestamp() <= upperTimestamp && filter.matches(event.tags()) && smallest.wants(offset)) {
				smallest.add(new TaggedEvent<>(offset, event));
			}
		}).thenApply((ignored) -> smallest.page());
	}

	/** Replays every event of every persistenceId after {@code afterId}, a page of ids at a time. */
	private CompletionStage<Void> scan(@Nullable String afterId,
			Consumer<PersistentEvent<String>> consumer) {
		return this.journal.persistenceIds(afterId, ID_PAGE).thenCompose((ids) -> {
			CompletionStage<Long> replayed = CompletableFuture.completedFuture(0L);
			for (String id : ids) {
				replayed = replayed.thenCompose((ignored) -> this.journal.replayRaw(id, 1, Long.MAX_VALUE, consumer));
			}
			return replayed.thenCompose((ignored) -> (ids.size() < ID_PAGE) ? CompletableFuture.<Void>completedFuture(null)
					: scan(ids.get(ids.size() - 1), consumer));
		});
	}

}
