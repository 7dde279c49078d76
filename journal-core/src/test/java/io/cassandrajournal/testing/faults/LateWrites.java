package io.cassandrajournal.testing.faults;

import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchableStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ColumnDefinitions;
import com.datastax.oss.driver.api.core.cql.Statement;

/**
 * The event rows (events and tag index) that {@link PlannedFaultSession} sent more than {@code in-flight-wait}
 * after their append's claim time (the row's {@code timestamp}, which the claim records as {@code updated_at}):
 * the documented residual window of docs/reliability.md, finding 7. A deleteTo may step over such a number as a
 * crash gap before its batch lands; the events row is shadowed by the append's write time, its tag rows stay.
 * The checker excuses a tag row left below a deleteTo only if its row is recorded here, with the same time stamp.
 * Since a row lands after it is sent, a row sent in time that was left behind is still a violation.
 */
final class LateWrites {

	/**
	 * One event row.
	 * @param persistenceId the entity
	 * @param sequenceNr its number
	 * @param timestamp the append's time stamp (epoch milliseconds)
	 */
	record Row(String persistenceId, long sequenceNr, long timestamp) {
	}

	private final Set<Row> rows = ConcurrentHashMap.newKeySet();

	private final long afterMillis;

	private final Clock clock;

	/**
	 * @param after how long after its claim a row counts as late: the run's {@code in-flight-wait}
	 * @param clock the journals' clock
	 */
	LateWrites(Duration after, Clock clock) {
		this.afterMillis = after.toMillis();
		this.clock = clock;
	}

	/** Called just before a statement is handed to the real session. */
	void sending(Statement<?> statement) {
		if (!(statement instanceof BatchStatement batch)) {
			return;
		}
		long now = this.clock.millis();
		for (BatchableStatement<?> child : batch) {
			// Inserts only: a deleteTo's tag-row deletes bind the same columns.
			if (child instanceof BoundStatement bound
					&& bound.getPreparedStatement().getQuery().stripLeading().regionMatches(true, 0, "INSERT", 0, 6)) {
				ColumnDefinitions variables = bound.getPreparedStatement().getVariableDefinitions();
				if (variables.contains("persistence_id") && variables.contains("sequence_nr")
						&& variables.contains("timestamp") && !bound.isNull("timestamp")) {
					long timestamp = bound.getLong("timestamp");
					if (now - timestamp > this.afterMillis) {
						this.rows.add(new Row(bound.getString("persistence_id"), bound.getLong("sequence_nr"), timestamp));
					}
				}
			}
		}
	}

	/** Records a row as sent late (the checker's tests). */
	void add(String persistenceId, long sequenceNr, long timestamp) {
		this.rows.add(new Row(persistenceId, sequenceNr, timestamp));
	}

	/** @return whether this row was sent late */
	boolean contains(String persistenceId, long sequenceNr, long timestamp) {
		return this.rows.contains(new Row(persistenceId, sequenceNr, timestamp));
	}

	/** @return how many rows were sent late */
	int size() {
		return this.rows.size();
	}

}
