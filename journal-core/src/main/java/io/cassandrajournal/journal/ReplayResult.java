package io.cassandrajournal.journal;

import java.util.List;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;

/**
 * What a {@linkplain Journal#replayContiguous contiguous replay} covered.
 *
 * @param lastSequenceNr the last event delivered, 0 if none
 * @param coveredTo every sequence number from the replay's first up to this one was delivered, stepped over as a
 * crash gap or is deleted ({@code fromSequenceNr - 1} if nothing was covered): the sequence number a state folded
 * from the delivered events reflects (with the events of {@code deleted} missing from it)
 * @param head the head (highest claimed sequence number) read by the replay
 * @param crashGaps the missing ranges stepped over because their claim was older than the in-flight wait
 * @param crashGapsSealed whether every range of {@code crashGaps} was sealed with a write time that shadows any
 * batch of its claim, so that none of them can ever show an event (docs/reliability.md, finding 13): false when
 * the journal does not seal (an in-flight wait of zero, a journal without seals) or the seal is not final
 * (server-side time stamps, finding 15 item 9); a reader that wants late events must then read the ranges again
 * @param deleted the numbers from the replay's first up to the journal's deletion mark ({@link Journal#deleteTo},
 * retention), which may lie beyond the replay's last: never read, never waited for, never sealed; {@code null} when
 * the replay starts above the mark (docs/reliability.md, finding 19). It never reaches past an event visible below
 * the mark that the replay did not deliver; events that survived the deletion inside it (docs/reliability.md,
 * finding 23) were delivered, and the range runs from its first deleted number to its last
 */
public record ReplayResult(long lastSequenceNr, long coveredTo, long head, List<SequenceRange> crashGaps,
		boolean crashGapsSealed, @Nullable SequenceRange deleted) {

	public ReplayResult {
		crashGaps = List.copyOf(crashGaps);
	}

	/**
	 * A result with nothing deleted in its range.
	 * @param lastSequenceNr see the record
	 * @param coveredTo see the record
	 * @param head see the record
	 * @param crashGaps see the record
	 * @param crashGapsSealed see the record
	 */
	public ReplayResult(long lastSequenceNr, long coveredTo, long head, List<SequenceRange> crashGaps,
			boolean crashGapsSealed) {
		this(lastSequenceNr, coveredTo, head, crashGaps, crashGapsSealed, null);
	}

	/**
	 * A result whose crash gaps (if any) were not sealed, with nothing deleted in its range.
	 * @param lastSequenceNr see the record
	 * @param coveredTo see the record
	 * @param head see the record
	 * @param crashGaps see the record
	 */
	public ReplayResult(long lastSequenceNr, long coveredTo, long head, List<SequenceRange> crashGaps) {
		this(lastSequenceNr, coveredTo, head, crashGaps, false, null);
	}

}
