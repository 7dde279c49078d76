package io.cassandrajournal.inmemory;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;

import io.cassandrajournal.internal.AppendValidation;
import io.cassandrajournal.internal.UnreadableSnapshots;
import io.cassandrajournal.serialization.EventSerializer;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.Snapshot;
import io.cassandrajournal.snapshot.SnapshotStore;

/**
 * A {@link SnapshotStore} in memory, for unit tests.
 */
public final class InMemorySnapshotStore implements SnapshotStore {

	private final Map<String, NavigableMap<Long, Stored>> snapshots = new ConcurrentHashMap<>();

	private final EventSerializer serializer;

	private final Clock clock;

	private final UnreadableSnapshots unreadable;

	public InMemorySnapshotStore() {
		this(new JacksonEventSerializer(), Clock.systemUTC());
	}

	public InMemorySnapshotStore(EventSerializer serializer, Clock clock) {
		this.serializer = serializer;
		this.clock = clock;
		this.unreadable = new UnreadableSnapshots(serializer);
	}

	@Override
	public CompletionStage<Void> save(String persistenceId, long sequenceNr, Object state) {
		try {
			AppendValidation.checkPersistenceId(persistenceId);
			AppendValidation.checkRange(sequenceNr, sequenceNr);
			String payload = this.serializer.serialize(state);
			this.snapshots.computeIfAbsent(persistenceId, (id) -> new ConcurrentSkipListMap<>())
				.put(sequenceNr, new Stored(this.clock.millis(), payload));
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	@Override
	public <S> CompletionStage<Optional<Snapshot<S>>> loadLatest(String persistenceId, long maxSequenceNr,
			Class<S> type) {
		NavigableMap<Long, Stored> stored = this.snapshots.get(persistenceId);
		if (stored == null) {
			return CompletableFuture.completedFuture(Optional.empty());
		}
		int tried = 0;
		for (Map.Entry<Long, Stored> entry : stored.headMap(maxSequenceNr, true).descendingMap().entrySet()) {
			if (tried++ == UnreadableSnapshots.CANDIDATES) {
				break;
			}
			Optional<S> state = this.unreadable.read(persistenceId, entry.getKey(),
					entry.getValue().payload(), type);
			if (state.isPresent()) {
				return CompletableFuture.completedFuture(Optional.of(new Snapshot<>(persistenceId, entry.getKey(),
						Instant.ofEpochMilli(entry.getValue().timestamp()), state.get())));
			}
		}
		return CompletableFuture.completedFuture(Optional.empty());
	}

	@Override
	public CompletionStage<Void> deleteOlderThan(String persistenceId, long sequenceNr) {
		NavigableMap<Long, Stored> stored = this.snapshots.get(persistenceId);
		if (stored != null) {
			stored.headMap(sequenceNr, false).clear();
		}
		return CompletableFuture.completedFuture(null);
	}

	private record Stored(long timestamp, String payload) {
	}

}
