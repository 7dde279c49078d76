package io.cassandrajournal.internal;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Remembers which conditions were already logged (a bounded set, oldest forgotten first), so a warning about a
 * lasting condition (a crash gap, an unreadable snapshot) is logged once, not on every read that meets it.
 */
public final class WarnOnce {

	private final Map<String, Boolean> seen;

	public WarnOnce(int capacity) {
		this.seen = new LinkedHashMap<>(16, 0.75f, false) {

			private static final long serialVersionUID = 1L;

			@Override
			protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
				return size() > capacity;
			}

		};
	}

	/** @return whether {@code key} is new (the caller logs), false if it was seen before */
	public boolean first(String key) {
		synchronized (this.seen) {
			return this.seen.put(key, Boolean.TRUE) == null;
		}
	}

}
