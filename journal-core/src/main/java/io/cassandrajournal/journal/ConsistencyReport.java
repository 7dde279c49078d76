package io.cassandrajournal.journal;

import java.util.List;

/**
 * The result of comparing a persistenceId's head (the claimed sequence number in {@code metadata}) with the
 * events actually stored. A process that dies between a committed claim and its event batch leaves the
 * claimed numbers without events: a gap. Gaps are harmless to the journal (replay skips them and the next
 * append continues after the head) but mean that events acknowledged to nobody were lost.
 *
 * @param persistenceId the entity
 * @param head the claimed head
 * @param highestStored the highest sequence number that has an event row (0 if none)
 * @param storedEvents how many event rows exist
 * @param missing the ranges of sequence numbers from 1 to the head that have no event row and were not
 * removed with {@link Journal#deleteTo} (the Cassandra journal records how far {@code deleteTo} deleted; numbers
 * up to there are never gaps, numbers after it are, the first ones included). Events deleted by another
 * implementation sharing the tables (the TypeScript one records no such mark) are reported as missing.
 */
public record ConsistencyReport(String persistenceId, long head, long highestStored, long storedEvents,
		List<SequenceRange> missing) {

	public ConsistencyReport {
		missing = List.copyOf(missing);
	}

	/** @return whether some claimed sequence numbers have no event */
	public boolean hasGap() {
		return !this.missing.isEmpty();
	}

	/**
	 * An inclusive range of sequence numbers.
	 *
	 * @param from the first
	 * @param to the last
	 */
	public record SequenceRange(long from, long to) {

		@Override
		public String toString() {
			return (this.from == this.to) ? Long.toString(this.from) : this.from + ".." + this.to;
		}

	}

}
