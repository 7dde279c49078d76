package io.cassandrajournal.spring.boot.projection;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.TagFilter;

/**
 * A projection assembled from the {@link ProjectionHandler} methods sharing its name.
 *
 * @param name the projection's name
 * @param tagFilter its tag filter, or {@code null}
 * @param persistenceId its persistenceId, or {@code null}
 * @param methods the handler methods
 * @param settings its settings
 * @param autoStartup whether it starts with the application
 * @param rebuildOnStart whether it reads from the beginning on every start, with a cursor kept in memory
 */
record ProjectionDeclaration(String name, @Nullable TagFilter tagFilter, @Nullable String persistenceId,
		List<HandlerMethod> methods, ProjectionSettings settings, boolean autoStartup, boolean rebuildOnStart) {

	String source() {
		return (this.tagFilter != null) ? "tag filter '" + this.tagFilter.canonical() + "'"
				: "persistenceId '" + this.persistenceId + "'";
	}

}
