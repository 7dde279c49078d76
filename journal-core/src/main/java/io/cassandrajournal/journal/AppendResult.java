package io.cassandrajournal.journal;

import java.time.Instant;
import java.util.Set;

/**
 * What a successful append stored.
 *
 * @param persistenceId the entity's id
 * @param firstSequenceNr the first event's sequence number
 * @param lastSequenceNr the last event's sequence number: the new head, to pass as expected sequence
 * number to the next append
 * @param timestamp the time stamp every event of the append carries
 * @param tags every tag of the appended events
 */
public record AppendResult(String persistenceId, long firstSequenceNr, long lastSequenceNr, Instant timestamp,
		Set<String> tags) {

	public AppendResult {
		tags = Set.copyOf(tags);
	}

	/** @return how many events were appended */
	public int eventCount() {
		return (int) (this.lastSequenceNr - this.firstSequenceNr + 1);
	}

}
