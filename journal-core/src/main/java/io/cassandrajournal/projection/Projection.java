package io.cassandrajournal.projection;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.query.TagFilter;

/**
 * What a projection reads and what it does with each event. Create with {@link #byTag} or
 * {@link #byPersistenceId}, then register with a {@link ProjectionEngine}.
 *
 * @param <E> the payload type
 * @param name the projection's name (part of its cursor identity)
 * @param tagFilter the tag filter, for a by-tag projection
 * @param persistenceId the persistenceId, for a by-persistenceId projection
 * @param payloadType the type payloads are read as; events that cannot be read as it fail their attempt;
 * {@code String.class} hands the stored JSON text over unread
 * @param handler the handler
 * @param settings recovery, polling, feed settings
 */
public record Projection<E>(String name, @Nullable TagFilter tagFilter, @Nullable String persistenceId,
		Class<E> payloadType, EventHandler<E> handler, ProjectionSettings settings) {

	public Projection {
		Objects.requireNonNull(name, "name");
		Objects.requireNonNull(payloadType, "payloadType");
		Objects.requireNonNull(handler, "handler");
		Objects.requireNonNull(settings, "settings");
		if ((tagFilter == null) == (persistenceId == null)) {
			throw new IllegalArgumentException("projection '" + name + "' needs exactly one of a tag filter or a persistenceId");
		}
	}

	/**
	 * @param <E> the payload type
	 * @param name the name
	 * @param filter the tag filter
	 * @param payloadType the payload type
	 * @param handler the handler
	 * @param settings the settings
	 * @return a projection over every event matching the filter
	 */
	public static <E> Projection<E> byTag(String name, TagFilter filter, Class<E> payloadType,
			EventHandler<E> handler, ProjectionSettings settings) {
		return new Projection<>(name, Objects.requireNonNull(filter, "filter"), null, payloadType, handler, settings);
	}

	/**
	 * @param <E> the payload type
	 * @param name the name
	 * @param persistenceId the entity
	 * @param payloadType the payload type
	 * @param handler the handler
	 * @param settings the settings
	 * @return a projection over one entity's events
	 */
	public static <E> Projection<E> byPersistenceId(String name, String persistenceId, Class<E> payloadType,
			EventHandler<E> handler, ProjectionSettings settings) {
		return new Projection<>(name, null, Objects.requireNonNull(persistenceId, "persistenceId"), payloadType, handler,
				settings);
	}

	/** @return the cursor identity: name plus canonical filter, or name plus {@code pid:<persistenceId>} */
	public ProjectionId id() {
		return (this.tagFilter != null) ? ProjectionId.byTag(this.name, this.tagFilter)
				: ProjectionId.byPersistenceId(this.name, Objects.requireNonNull(this.persistenceId));
	}

}
