package io.cassandrajournal.internal;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Statement;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * Where this fits: when a seal of claimed numbers holds (docs/reliability.md, findings 13 and 15): a read at the
 * journal's consistency sees every acknowledged write (a QUORUM-class level), and rows carry client-side write time
 * stamps (the driver's generator gives one). Used by the late tag row checks (the live tag feed's and the writer's
 * settle of an uncertain append), which seal and so must not run where a seal does not hold. The same conditions as
 * the replay's seal on fix/writer-deadline ({@code ContiguousReplay.sealUnsafe}); one of the two can call the other.
 */
public final class SealConditions {

	private SealConditions() {
	}

	/**
	 * @param session the session
	 * @param options the journal's options
	 * @return whether a seal holds: an in-flight wait, a QUORUM-class consistency, client-side time stamps
	 */
	public static boolean hold(CqlSession session, CassandraJournalOptions options) {
		if (options.inFlightWait().isZero()) {
			return false;
		}
		String level = options.consistency().name();
		boolean overlapping = level.equals(ConsistencyLevel.QUORUM.name())
				|| level.equals(ConsistencyLevel.LOCAL_QUORUM.name()) || level.equals(ConsistencyLevel.EACH_QUORUM.name())
				|| level.equals(ConsistencyLevel.ALL.name());
		return overlapping && session.getContext().getTimestampGenerator().next() != Statement.NO_DEFAULT_TIMESTAMP;
	}

}
