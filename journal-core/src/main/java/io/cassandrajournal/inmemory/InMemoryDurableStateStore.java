package io.cassandrajournal.inmemory;

import java.time.Clock;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import io.cassandrajournal.internal.AppendValidation;
import io.cassandrajournal.serialization.EventSerializer;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateConflictException;
import io.cassandrajournal.state.DurableStateStore;

/**
 * A {@link DurableStateStore} in memory, for unit tests: same revision checks as the Cassandra store.
 */
public final class InMemoryDurableStateStore implements DurableStateStore {

	private final Map<String, Stored> values = new ConcurrentHashMap<>();

	private final EventSerializer serializer;

	private final Clock clock;

	public InMemoryDurableStateStore() {
		this(new JacksonEventSerializer(), Clock.systemUTC());
	}

	public InMemoryDurableStateStore(EventSerializer serializer, Clock clock) {
		this.serializer = serializer;
		this.clock = clock;
	}

	@Override
	public <S> CompletionStage<Optional<DurableState<S>>> get(String persistenceId, Class<S> type) {
		Stored stored = this.values.get(persistenceId);
		if (stored == null) {
			return CompletableFuture.completedFuture(Optional.empty());
		}
		try {
			return CompletableFuture.completedFuture(Optional.of(new DurableState<>(persistenceId, stored.revision(),
					Instant.ofEpochMilli(stored.updatedAt()), this.serializer.deserialize(stored.payload(), type))));
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	@Override
	public CompletionStage<Void> upsert(String persistenceId, long revision, Object value) {
		try {
			AppendValidation.checkPersistenceId(persistenceId);
			if (revision < 1) {
				throw new IllegalArgumentException("revision must be at least 1, was " + revision);
			}
			String payload = this.serializer.serialize(value);
			this.values.compute(persistenceId, (id, current) -> {
				long actual = (current != null) ? current.revision() : 0;
				if (actual != revision - 1) {
					throw new DurableStateConflictException(persistenceId, revision - 1, actual);
				}
				return new Stored(revision, payload, this.clock.millis());
			});
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	@Override
	public CompletionStage<Void> delete(String persistenceId, long revision) {
		try {
			this.values.computeIfPresent(persistenceId, (id, current) -> {
				if (current.revision() != revision) {
					throw new DurableStateConflictException(persistenceId, revision, current.revision());
				}
				return null;
			});
			return CompletableFuture.completedFuture(null);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	private record Stored(long revision, String payload, long updatedAt) {
	}

}
