package io.cassandrajournal.spring.boot.projection;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;

import io.cassandrajournal.projection.InMemoryOffsetStore;
import io.cassandrajournal.projection.OffsetStore;
import io.cassandrajournal.projection.ProjectionId;
import io.cassandrajournal.query.TagOffset;

/**
 * The cursors of {@code @ProjectionHandler(rebuildOnStart = true)} projections, kept in this process's memory so
 * that they start from the beginning on every start of the application, while every other projection's cursor
 * stays in the durable offset store. {@link #around(OffsetStore)} gives the engine an offset store that routes
 * each projection to the one it belongs to.
 */
public final class InMemoryCursors {

	private final Set<ProjectionId> kept = ConcurrentHashMap.newKeySet();

	private final OffsetStore memory = new InMemoryOffsetStore();

	private volatile boolean inUse;

	/**
	 * Keeps a projection's cursor in memory from now on (call before it starts).
	 * @param id the projection
	 */
	public void keep(ProjectionId id) {
		this.kept.add(id);
	}

	/**
	 * @param id a projection
	 * @return whether its cursor is kept in memory
	 */
	public boolean keeps(ProjectionId id) {
		return this.kept.contains(id);
	}

	/** @return whether an engine's offset store was made by {@link #around(OffsetStore)} */
	public boolean inUse() {
		return this.inUse;
	}

	/**
	 * @param durable the durable offset store of every other projection
	 * @return an offset store for the engine that routes each projection to memory or to {@code durable}
	 */
	public OffsetStore around(OffsetStore durable) {
		this.inUse = true;
		return new OffsetStore() {

			@Override
			public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
				return storeOf(id).load(id);
			}

			@Override
			public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
				return storeOf(id).save(id, offset);
			}

			@Override
			public CompletionStage<Void> delete(ProjectionId id) {
				return storeOf(id).delete(id);
			}

			private OffsetStore storeOf(ProjectionId id) {
				return keeps(id) ? InMemoryCursors.this.memory : durable;
			}

		};
	}

}
