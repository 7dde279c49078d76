package io.cassandrajournal.internal;

import java.util.Optional;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * How the snapshot stores read a snapshot's payload: one that does not read as the requested state type
 * (written by another implementation, or in an older state shape) is stepped over with one warning per
 * snapshot, never a failed load.
 */
public final class UnreadableSnapshots {

	/**
	 * Snapshots tried per load, newest first: the newest plus three older ones (the TypeScript implementation
	 * keeps its newest three).
	 */
	public static final int CANDIDATES = 4;

	private static final Logger logger = LoggerFactory.getLogger(UnreadableSnapshots.class);

	private final EventSerializer serializer;

	private final WarnOnce warned = new WarnOnce(10_000);

	public UnreadableSnapshots(EventSerializer serializer) {
		this.serializer = serializer;
	}

	/** @return the state, or empty (logged once per snapshot) if the payload does not read as {@code type} */
	public <S> Optional<S> read(String persistenceId, long sequenceNr, @Nullable String payload, Class<S> type) {
		try {
			if (payload == null) {
				throw new JournalSerializationException("no payload", new NullPointerException("payload"));
			}
			return Optional.of(this.serializer.deserialize(payload, type));
		}
		catch (JournalSerializationException ex) {
			if (this.warned.first(persistenceId + "#" + sequenceNr + "#" + type.getName())) {
				logger.warn("Snapshot of '{}' at sequence number {} cannot be read as {} ({}); stepping over it to an "
						+ "older snapshot or the events", persistenceId, sequenceNr, type.getName(), ex.getMessage());
			}
			return Optional.empty();
		}
	}

}
