package io.cassandrajournal.inmemory;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.internal.AppendValidation;
import io.cassandrajournal.internal.RawEvents;
import io.cassandrajournal.internal.Utf8Order;
import io.cassandrajournal.journal.AppendListener;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.ConsistencyReport;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.JournalConcurrencyException;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.journal.ReplayResult;
import io.cassandrajournal.query.ReadJournal;
import io.cassandrajournal.serialization.EventSerializer;
import io.cassandrajournal.serialization.JacksonEventSerializer;

/**
 * A {@link Journal} in memory, for unit tests: same contract as the Cassandra journal, payloads go through
 * the same serializer (so a payload that could not be stored in Cassandra fails here too), nothing
 * survives the JVM. Never has gaps.
 */
public final class InMemoryJournal implements Journal {

	private final Map<String, Stream> streams = new ConcurrentHashMap<>();

	private final List<AppendListener> listeners = new CopyOnWriteArrayList<>();

	private final EventSerializer serializer;

	private final Clock clock;

	/** A journal with the default serializer and the UTC clock. */
	public InMemoryJournal() {
		this(new JacksonEventSerializer(), Clock.systemUTC());
	}

	/**
	 * @param serializer the serializer
	 * @param clock the clock that stamps events
	 */
	public InMemoryJournal(EventSerializer serializer, Clock clock) {
		this.serializer = serializer;
		this.clock = clock;
	}

	/**
	 * @return the query side over this journal: tag queries and live tag feeds replay every persistenceId, so
	 * tag and filter projections run without Cassandra (for tests and local runs)
	 */
	public ReadJournal readJournal() {
		return ReadJournal.replaying(this, this.serializer, this.clock);
	}

	@Override
	public CompletionStage<AppendResult> append(String persistenceId, long expectedSequenceNr,
			List<EventToAppend> events) {
		AppendResult result;
		try {
			List<String> payloads = AppendValidation.check(persistenceId, expectedSequenceNr, events, this.serializer);
			Stream stream = this.streams.computeIfAbsent(persistenceId, (id) -> new Stream());
			long timestamp = this.clock.millis();
			synchronized (stream) {
				if (stream.head != expectedSequenceNr) {
					throw new JournalConcurrencyException(persistenceId, expectedSequenceNr, stream.head);
				}
				Set<String> allTags = new HashSet<>();
				for (int i = 0; i < events.size(); i++) {
					long sequenceNr = expectedSequenceNr + 1 + i;
					stream.rows.put(sequenceNr, new Row(timestamp, payloads.get(i), events.get(i).tags()));
					allTags.addAll(events.get(i).tags());
				}
				stream.head = expectedSequenceNr + events.size();
				result = new AppendResult(persistenceId, expectedSequenceNr + 1, stream.head,
						Instant.ofEpochMilli(timestamp), allTags);
			}
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		this.listeners.forEach((listener) -> listener.onAppended(result));
		return CompletableFuture.completedFuture(result);
	}

	@Override
	public <E> CompletionStage<Long> replay(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Class<E> payloadType, Consumer<? super PersistentEvent<E>> consumer) {
		try {
			AppendValidation.checkPersistenceId(persistenceId);
			AppendValidation.checkRange(fromSequenceNr, toSequenceNr);
			Stream stream = this.streams.get(persistenceId);
			long last = 0;
			if (stream != null && toSequenceNr >= fromSequenceNr) {
				List<Map.Entry<Long, Row>> rows;
				synchronized (stream) {
					rows = new ArrayList<>(stream.rows.subMap(fromSequenceNr, true, toSequenceNr, true).entrySet());
				}
				for (Map.Entry<Long, Row> entry : rows) {
					Row row = entry.getValue();
					@SuppressWarnings("unchecked")
					List<E> payloads = (payloadType == null) ? List.of((E) row.payload)
							: RawEvents.payloads(persistenceId, entry.getKey(), row.payload, this.serializer, payloadType);
					for (E payload : payloads) {
						consumer.accept(new PersistentEvent<>(persistenceId, entry.getKey(),
								Instant.ofEpochMilli(row.timestamp), row.tags, payload));
					}
					last = entry.getKey();
				}
			}
			return CompletableFuture.completedFuture(last);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	@Override
	public CompletionStage<Long> replayRaw(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Consumer<? super PersistentEvent<String>> consumer) {
		return replay(persistenceId, fromSequenceNr, toSequenceNr, null, consumer);
	}

	/**
	 * Never waits: events here are visible the moment their append completes, and no claim outlives its append.
	 * Numbers up to how far {@link #deleteTo} deleted are reported as deleted, as the Cassandra journal does.
	 */
	@Override
	public <E> CompletionStage<ReplayResult> replayContiguous(String persistenceId, long fromSequenceNr,
			long toSequenceNr, Class<E> payloadType, Consumer<? super PersistentEvent<E>> consumer) {
		Stream stream = this.streams.get(persistenceId);
		long deletedTo;
		if (stream == null) {
			deletedTo = 0;
		}
		else {
			synchronized (stream) {
				deletedTo = stream.deletedTo;
			}
		}
		SequenceRange deleted = (deletedTo >= fromSequenceNr) ? new SequenceRange(fromSequenceNr, deletedTo) : null;
		return highestSequenceNr(persistenceId).thenCompose((head) -> {
			long upper = Math.min(toSequenceNr, head);
			return replay(persistenceId, fromSequenceNr, upper, payloadType, consumer).thenApply(
					(last) -> new ReplayResult(last, Math.max(fromSequenceNr - 1, upper), head, List.of(), false, deleted));
		});
	}

	@Override
	public CompletionStage<ReplayResult> replayContiguousRaw(String persistenceId, long fromSequenceNr,
			long toSequenceNr, Consumer<? super PersistentEvent<String>> consumer) {
		return replayContiguous(persistenceId, fromSequenceNr, toSequenceNr, null, consumer);
	}

	@Override
	public CompletionStage<Long> highestSequenceNr(String persistenceId) {
		CompletionStage<Long> invalid = AppendValidation.failure(() -> AppendValidation.checkPersistenceId(persistenceId));
		if (invalid != null) {
			return invalid;
		}
		Stream stream = this.streams.get(persistenceId);
		if (stream == null) {
			return CompletableFuture.completedFuture(0L);
		}
		synchronized (stream) {
			return CompletableFuture.completedFuture(stream.head);
		}
	}

	@Override
	public CompletionStage<Void> deleteTo(String persistenceId, long toSequenceNr) {
		CompletionStage<Void> invalid = AppendValidation.failure(() -> {
			AppendValidation.checkPersistenceId(persistenceId);
			AppendValidation.checkRange(1, toSequenceNr);
		});
		if (invalid != null) {
			return invalid;
		}
		Stream stream = this.streams.get(persistenceId);
		if (stream != null) {
			synchronized (stream) {
				stream.rows.headMap(toSequenceNr, true).clear();
				stream.deletedTo = Math.max(stream.deletedTo, Math.min(toSequenceNr, stream.head));
			}
		}
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletionStage<ConsistencyReport> checkConsistency(String persistenceId) {
		Stream stream = this.streams.get(persistenceId);
		if (stream == null) {
			return CompletableFuture.completedFuture(new ConsistencyReport(persistenceId, 0, 0, 0, List.of()));
		}
		synchronized (stream) {
			long highest = stream.rows.isEmpty() ? 0 : stream.rows.lastKey();
			return CompletableFuture.completedFuture(
					new ConsistencyReport(persistenceId, stream.head, highest, stream.rows.size(), List.of()));
		}
	}

	@Override
	public void addAppendListener(AppendListener listener) {
		this.listeners.add(listener);
	}

	@Override
	public void removeAppendListener(AppendListener listener) {
		this.listeners.remove(listener);
	}

	@Override
	public CompletionStage<List<String>> persistenceIds(@Nullable String afterId, int limit) {
		if (limit < 1) {
			return CompletableFuture.failedFuture(new IllegalArgumentException("limit must be at least 1, was " + limit));
		}
		java.util.TreeSet<String> sorted = new java.util.TreeSet<>(Utf8Order.COMPARATOR);
		sorted.addAll(this.streams.keySet());
		java.util.SortedSet<String> tail = (afterId == null) ? sorted : sorted.tailSet(afterId, false);
		return CompletableFuture.completedFuture(tail.stream().limit(limit).toList());
	}

	private static final class Stream {

		private final NavigableMap<Long, Row> rows = new TreeMap<>();

		private long head;

		/** How far deleteTo deleted: the Cassandra journal's deletion mark. */
		private long deletedTo;

	}

	private record Row(long timestamp, String payload, Set<String> tags) {
	}

}
