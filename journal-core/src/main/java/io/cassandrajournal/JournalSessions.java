package io.cassandrajournal;

import com.datastax.oss.driver.api.core.CqlSession;

/**
 * The former name of {@link CassandraSessions}, kept so that existing code compiles.
 *
 * @deprecated use {@link CassandraSessions}: one name per concept (the starter's {@code JournalSession} is the
 * session its stores use)
 */
@Deprecated(since = "0.1.0")
public final class JournalSessions {

	private JournalSessions() {
	}

	/**
	 * @param options options with at least one contact point and the local data center
	 * @return an open session; the caller closes it
	 * @deprecated use {@link CassandraSessions#open}
	 */
	@Deprecated(since = "0.1.0")
	public static CqlSession open(CassandraJournalOptions options) {
		return CassandraSessions.open(options);
	}

}
