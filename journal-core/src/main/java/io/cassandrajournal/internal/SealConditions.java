package io.cassandrajournal.internal;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.retry.RetryPolicy;
import com.datastax.oss.driver.internal.core.retry.DefaultRetryPolicy;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * When a seal of claimed numbers holds (docs/reliability.md, findings 13 and 15, items 2 and 9): a read after the
 * writer's deadline sees every acknowledged write (reads and writes at overlapping consistency levels), and an
 * append's rows carry the client-side write time taken before its claim (so a seal with a later write time shadows
 * them wherever they land), and no retry policy turns a write acknowledged by fewer replicas than the level into
 * a success or retries at a lower level (the driver's {@code ConsistencyDowngradingRetryPolicy} does both). Used by every reader that seals: the replay's step over a crash gap, the live tag feed's
 * check of late tag rows and the writer's settle of its own uncertain append.
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
		return !options.inFlightWait().isZero() && unsafe(session, options) == null;
	}

	/**
	 * @param session the session
	 * @param options the journal's options
	 * @return why sealing would be unsafe with this session and these options, naming the setting; null when the
	 * conditions hold
	 */
	public static @Nullable String unsafe(CqlSession session, CassandraJournalOptions options) {
		if (!overlapping(options.consistency())) {
			return "the consistency level " + options.consistency() + " (journal.cassandra.consistency / "
					+ "CassandraJournalOptions.withConsistency) does not make a read see every acknowledged write; "
					+ "use QUORUM, LOCAL_QUORUM, EACH_QUORUM or ALL";
		}
		for (var profile : session.getContext().getRetryPolicies().entrySet()) {
			RetryPolicy policy = profile.getValue();
			if (policy != null && policy.getClass() != DefaultRetryPolicy.class) {
				return "the retry policy " + policy.getClass().getName() + " of the driver profile '" + profile.getKey()
						+ "' (advanced.retry-policy.class) may acknowledge a write that fewer replicas than the "
						+ "consistency level hold or retry it at a lower level (ConsistencyDowngradingRetryPolicy "
						+ "does both), so a read could miss an acknowledged event; use the driver's DefaultRetryPolicy";
			}
		}
		if (session.getContext().getTimestampGenerator().next() == Statement.NO_DEFAULT_TIMESTAMP) {
			return "the driver's time stamp generator (advanced.timestamp-generator) leaves write time stamps to the "
					+ "server, so a seal cannot shadow a batch that reaches a coordinator after it; use a client-side "
					+ "generator (the driver's default, AtomicTimestampGenerator)";
		}
		return null;
	}

	/**
	 * @param level the journal's consistency level, used for every read and write
	 * @return whether a read at it sees every write acknowledged at it, for any replication factor (in one data
	 * centre for {@code LOCAL_QUORUM})
	 */
	public static boolean overlapping(ConsistencyLevel level) {
		String name = level.name();
		return name.equals("QUORUM") || name.equals("LOCAL_QUORUM") || name.equals("EACH_QUORUM")
				|| name.equals("ALL");
	}

}
