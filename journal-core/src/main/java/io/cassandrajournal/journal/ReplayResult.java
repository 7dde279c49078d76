package io.cassandrajournal.journal;

import java.util.List;

import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;

/**
 * What a {@linkplain Journal#replayContiguous contiguous replay} covered.
 *
 * @param lastSequenceNr the last event delivered, 0 if none
 * @param coveredTo every sequence number from the replay's first up to this one was delivered or stepped
 * over as a crash gap ({@code fromSequenceNr - 1} if nothing was covered): the sequence number a state folded
 * from the delivered events reflects
 * @param head the head (highest claimed sequence number) read by the replay
 * @param crashGaps the missing ranges stepped over because their claim was older than the in-flight wait
 */
public record ReplayResult(long lastSequenceNr, long coveredTo, long head, List<SequenceRange> crashGaps) {

	public ReplayResult {
		crashGaps = List.copyOf(crashGaps);
	}

}
