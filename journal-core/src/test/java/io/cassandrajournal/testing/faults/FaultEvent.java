package io.cassandrajournal.testing.faults;

/**
 * The payload every event of a fault run carries: which operation wrote it, its place in that operation, and
 * the change to an account's balance (0 for the contended appends).
 *
 * @param op the operation's number in the {@link History}
 * @param index the event's position in the operation (0-based)
 * @param delta the change to the balance
 */
public record FaultEvent(long op, int index, long delta) {
}
