package io.cassandrajournal.projection;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import io.cassandrajournal.query.TagOffset;

/**
 * Offsets in memory: for tests only, since every restart replays from the beginning.
 */
public final class InMemoryOffsetStore implements OffsetStore {

	private final Map<ProjectionId, TagOffset> offsets = new ConcurrentHashMap<>();

	@Override
	public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
		return CompletableFuture.completedFuture(Optional.ofNullable(this.offsets.get(id)));
	}

	@Override
	public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
		this.offsets.put(id, offset);
		return CompletableFuture.completedFuture(null);
	}

	@Override
	public CompletionStage<Void> delete(ProjectionId id) {
		this.offsets.remove(id);
		return CompletableFuture.completedFuture(null);
	}

}
