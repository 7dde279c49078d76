package io.cassandrajournal.journal;

import io.cassandrajournal.JournalUnavailableException;

/**
 * An append whose outcome is open: its sequence range was claimed, then some of its writes failed even
 * after retries, and at least one write may have been applied (a timeout after sending) or certainly was.
 * The events may or may not be visible, now or later: <b>do not assume the append failed</b>; reload the
 * entity (replay) to see what is there. With events in several partitions or under several tags, part of
 * them may be stored (an event in {@code events} but not yet in the tag index, or the reverse).
 * <p>
 * The range is never released on purpose once a write may have landed, so no later append reuses its sequence
 * numbers and each (persistenceId, sequenceNr) holds at most one event; a retry with the same expected sequence
 * number then fails with {@link JournalConcurrencyException}. Sequence numbers of the range that hold no event
 * are a gap, as after a crash between claim and events: replays step over it and
 * {@link CassandraJournal#checkConsistency(String)} reports it. Three variants ({@link #unresolvedClaim},
 * {@link #overtakenClaim} and {@link #unreleasedClaim}) mean that nothing of the append was written and the claim <em>may</em> hold: a
 * release or claim that timed out may or may not have been applied, so a retry may then also succeed.
 */
public class JournalWriteUncertainException extends JournalUnavailableException {

	private static final long serialVersionUID = 1L;

	private final String persistenceId;

	private final long firstSequenceNr;

	private final long lastSequenceNr;

	/** Whether rows of the range may exist while its claim holds (not after a claim of uncertain fate). */
	private final boolean rowsMayExist;

	/**
	 * @param persistenceId the entity appended to
	 * @param firstSequenceNr the first sequence number of the claimed range
	 * @param lastSequenceNr the last one
	 * @param cause the last failure of a write that did not succeed
	 */
	public JournalWriteUncertainException(String persistenceId, long firstSequenceNr, long lastSequenceNr,
			Throwable cause) {
		super("Append of sequence numbers " + firstSequenceNr + ".." + lastSequenceNr + " to '" + persistenceId
				+ "' may or may not be visible: a write failed after retries (" + cause.getMessage()
				+ ") and some writes may have been applied. The range stays claimed; do not assume the append "
				+ "failed: replay to see its events. Numbers without an event are a gap, as after a crash.", cause);
		this.persistenceId = persistenceId;
		this.firstSequenceNr = firstSequenceNr;
		this.lastSequenceNr = lastSequenceNr;
		this.rowsMayExist = true;
	}

	private JournalWriteUncertainException(String message, String persistenceId, long firstSequenceNr,
			long lastSequenceNr, Throwable cause, boolean rowsMayExist) {
		super(message, cause);
		this.persistenceId = persistenceId;
		this.firstSequenceNr = firstSequenceNr;
		this.lastSequenceNr = lastSequenceNr;
		this.rowsMayExist = rowsMayExist;
	}

	/**
	 * The append's claim timed out and reading the head to resolve it failed too: no event of the append was
	 * written, but the claim may hold (then its numbers are a gap, as after a crash).
	 * @param persistenceId the entity appended to
	 * @param firstSequenceNr the first sequence number of the claimed range
	 * @param lastSequenceNr the last one
	 * @param cause the claim's timeout
	 * @return the exception
	 */
	public static JournalWriteUncertainException unresolvedClaim(String persistenceId, long firstSequenceNr,
			long lastSequenceNr, Throwable cause) {
		return new JournalWriteUncertainException("The claim of sequence numbers " + firstSequenceNr + ".."
				+ lastSequenceNr + " on '" + persistenceId + "' timed out (" + cause.getMessage() + ") and reading the "
				+ "head to resolve it failed too: nothing of this append was written, but the claim may hold. Reload "
				+ "before deciding again (a retry with the same expected sequence number fails with a conflict if the "
				+ "claim held; its numbers are then a gap, as after a crash).", persistenceId, firstSequenceNr,
				lastSequenceNr, cause, false);
	}

	/**
	 * No write of the append reached a replica and releasing its claim failed too (or another writer had already
	 * moved on from it): no event of the append was written, but the claim may hold (then its numbers are a gap,
	 * as after a crash).
	 * @param persistenceId the entity appended to
	 * @param firstSequenceNr the first sequence number of the claimed range
	 * @param lastSequenceNr the last one
	 * @param cause the writes' failure
	 * @return the exception
	 */
	public static JournalWriteUncertainException unreleasedClaim(String persistenceId, long firstSequenceNr,
			long lastSequenceNr, Throwable cause) {
		return new JournalWriteUncertainException("The writes of sequence numbers " + firstSequenceNr + ".."
				+ lastSequenceNr + " on '" + persistenceId + "' failed before reaching Cassandra (" + cause.getMessage()
				+ ") and their claim could not be released: nothing of this append was written, but the claim may "
				+ "hold. Reload before deciding again (a retry with the same expected sequence number fails with a "
				+ "conflict if the claim held; its numbers are then a gap, as after a crash).", persistenceId,
				firstSequenceNr, lastSequenceNr, cause, false);
	}

	/**
	 * The append's claim timed out and the head, read to resolve it, was already above the claimed range:
	 * another writer claimed after it, either on top of this claim (then it held and its numbers are a gap) or
	 * from the same expected number (then it did not apply). No event of the append was written; the claim may
	 * hold.
	 * @param persistenceId the entity appended to
	 * @param firstSequenceNr the first sequence number of the claimed range
	 * @param lastSequenceNr the last one
	 * @param head the head the resolving read found
	 * @param cause the claim's timeout
	 * @return the exception
	 */
	public static JournalWriteUncertainException overtakenClaim(String persistenceId, long firstSequenceNr,
			long lastSequenceNr, long head, Throwable cause) {
		return new JournalWriteUncertainException("The claim of sequence numbers " + firstSequenceNr + ".."
				+ lastSequenceNr + " on '" + persistenceId + "' timed out (" + cause.getMessage() + ") and another "
				+ "writer has since moved the head to " + head + ": nothing of this append was written, but the claim "
				+ "may hold (then its numbers are a gap, as after a crash). Reload before deciding again.", persistenceId,
				firstSequenceNr, lastSequenceNr, cause, false);
	}

	/**
	 * The append's rows were written, but later than {@code in-flight-wait} after its claim: a reader that found
	 * its numbers still missing after that wait may have stepped over them as a crash gap and sealed them (a range
	 * deletion that shadows rows landing after it), so its events may or may not be visible, now and later.
	 * @param persistenceId the entity appended to
	 * @param firstSequenceNr the first sequence number of the claimed range
	 * @param lastSequenceNr the last one
	 * @param inFlightWait the journal's in-flight wait
	 * @return the exception
	 */
	public static JournalWriteUncertainException lateWrite(String persistenceId, long firstSequenceNr,
			long lastSequenceNr, java.time.Duration inFlightWait) {
		String message = "The writes of sequence numbers " + firstSequenceNr + ".." + lastSequenceNr + " on '"
				+ persistenceId + "' completed later than the in-flight wait of " + inFlightWait + " after their claim: "
				+ "a reader may have stepped over these numbers as a crash gap and sealed them, so their events may or "
				+ "may not be visible. Reload before deciding again.";
		return new JournalWriteUncertainException(message, persistenceId, firstSequenceNr, lastSequenceNr,
				new java.util.concurrent.TimeoutException("the rows' write completed later than the in-flight wait of "
						+ inFlightWait + " after the claim"), true);
	}

	/** @return the entity appended to */
	public String persistenceId() {
		return this.persistenceId;
	}

	/** @return the first sequence number of the claimed range */
	public long firstSequenceNr() {
		return this.firstSequenceNr;
	}

	/** @return the last sequence number of the claimed range (the head the journal now holds or passed) */
	public long lastSequenceNr() {
		return this.lastSequenceNr;
	}

	/**
	 * @return whether rows of the range may have been written while the claim holds (a write that may have applied,
	 * or one that completed after the writer's deadline); false when nothing was written or the claim's fate is
	 * unknown (for {@link UncertainAppends})
	 */
	boolean rowsMayExist() {
		return this.rowsMayExist;
	}

}
