package io.cassandrajournal.spring.boot.autoconfigure;

import com.datastax.oss.driver.api.core.CqlSession;

/**
 * The session the journal's stores use. Either the journal's own (built from
 * {@code journal.cassandra.contact-points}, closed with the context) or the application's {@link CqlSession}
 * bean (from {@code spring.cassandra.*}, left to its owner). A distinct type, so that an application keeps
 * exactly one {@code CqlSession} bean for Spring Data.
 */
public final class JournalSession implements AutoCloseable {

	private final CqlSession session;

	private final boolean owned;

	private JournalSession(CqlSession session, boolean owned) {
		this.session = session;
		this.owned = owned;
	}

	/**
	 * @param session a session the journal opened itself
	 * @return a holder that closes it with the context
	 */
	public static JournalSession owned(CqlSession session) {
		return new JournalSession(session, true);
	}

	/**
	 * @param session the application's session
	 * @return a holder that never closes it
	 */
	public static JournalSession shared(CqlSession session) {
		return new JournalSession(session, false);
	}

	/** @return the session */
	public CqlSession session() {
		return this.session;
	}

	/** @return whether the journal opened the session itself */
	public boolean isOwned() {
		return this.owned;
	}

	@Override
	public void close() {
		if (this.owned) {
			this.session.close();
		}
	}

}
