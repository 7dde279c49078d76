package io.cassandrajournal.projection;

import java.util.Objects;

/**
 * A projection's cursor identity: its name plus what it reads, the canonical tag filter or the
 * persistenceId. Renaming either starts a new cursor (from the beginning).
 *
 * @param name the projection's name
 * @param key the canonical tag filter, or {@code pid:} plus the persistenceId
 */
public record ProjectionId(String name, String key) {

	public ProjectionId {
		Objects.requireNonNull(name, "name");
		Objects.requireNonNull(key, "key");
		if (name.isBlank()) {
			throw new IllegalArgumentException("projection name must not be blank");
		}
	}

	@Override
	public String toString() {
		return this.name + "[" + this.key + "]";
	}

}
