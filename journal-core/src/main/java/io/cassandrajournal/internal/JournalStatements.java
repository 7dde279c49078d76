package io.cassandrajournal.internal;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DefaultConsistencyLevel;
import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * Every statement of the journal's write and read paths, prepared once. Consistency, serial consistency,
 * timeout and idempotence are set on the prepared statements, so every bound statement inherits them:
 * claims and releases are not idempotent (a retried Paxos round could apply twice); inserts, reads and
 * deletes are.
 */
public final class JournalStatements {

	public final PreparedStatement insertEvent;

	public final PreparedStatement insertPersistenceId;

	public final PreparedStatement claimFirst;

	public final PreparedStatement claimNext;

	public final PreparedStatement releaseFirst;

	public final PreparedStatement setHead;

	public final PreparedStatement selectHead;

	public final PreparedStatement selectHeadSerial;

	public final PreparedStatement selectEvents;

	/** The first event above a sequence number in one partition: its number and time stamp (its claim's). */
	public final PreparedStatement selectFirstAbove;

	public final PreparedStatement selectSequenceNrs;

	public final PreparedStatement deletePartition;

	public final PreparedStatement deleteRange;

	public JournalStatements(CqlSession session, CassandraJournalOptions o) {
		Statements s = new Statements(session, o);
		String ks = o.requireKeyspace();
		String events = ks + "." + o.eventsTable();
		String metadata = ks + "." + o.metadataTable();
		this.insertEvent = s.write("INSERT INTO " + events
				+ " (persistence_id, partition_nr, sequence_nr, timestamp, payload, tags) VALUES (?, ?, ?, ?, ?, ?)");
		this.insertPersistenceId = s.write("INSERT INTO " + ks + "." + o.allIdsTable()
				+ " (tag, persistence_id) VALUES (?, ?)");
		this.claimFirst = s.conditional("INSERT INTO " + metadata
				+ " (persistence_id, max_sequence_nr, updated_at) VALUES (?, ?, ?) IF NOT EXISTS");
		this.claimNext = s.conditional("UPDATE " + metadata
				+ " SET max_sequence_nr = ?, updated_at = ? WHERE persistence_id = ? IF max_sequence_nr = ?");
		this.releaseFirst = s.conditional("DELETE FROM " + metadata + " WHERE persistence_id = ? IF max_sequence_nr = ?");
		this.setHead = s.write("UPDATE " + metadata + " SET max_sequence_nr = ?, updated_at = ? WHERE persistence_id = ?");
		String selectHeadCql = "SELECT max_sequence_nr, updated_at FROM " + metadata + " WHERE persistence_id = ?";
		this.selectHead = s.read(selectHeadCql);
		this.selectHeadSerial = s.serialRead(selectHeadCql);
		this.selectEvents = s.read("SELECT sequence_nr, timestamp, payload, tags FROM " + events
				+ " WHERE persistence_id = ? AND partition_nr = ? AND sequence_nr >= ? AND sequence_nr <= ?");
		this.selectFirstAbove = s.read("SELECT sequence_nr, timestamp FROM " + events
				+ " WHERE persistence_id = ? AND partition_nr = ? AND sequence_nr > ? LIMIT 1");
		this.selectSequenceNrs = s.read("SELECT sequence_nr FROM " + events
				+ " WHERE persistence_id = ? AND partition_nr = ?");
		this.deletePartition = s.write("DELETE FROM " + events + " WHERE persistence_id = ? AND partition_nr = ?");
		this.deleteRange = s.write("DELETE FROM " + events
				+ " WHERE persistence_id = ? AND partition_nr = ? AND sequence_nr <= ?");
	}

	/**
	 * Prepares statements with the journal's consistency settings.
	 */
	public static final class Statements {

		private final CqlSession session;

		private final CassandraJournalOptions options;

		public Statements(CqlSession session, CassandraJournalOptions options) {
			this.session = session;
			this.options = options;
		}

		private SimpleStatement base(String cql) {
			return SimpleStatement.newInstance(cql)
				.setConsistencyLevel(this.options.consistency())
				.setTimeout(this.options.requestTimeout())
				.setPageSize(this.options.pageSize());
		}

		/** @return an idempotent write */
		public PreparedStatement write(String cql) {
			return this.session.prepare(base(cql).setIdempotent(true));
		}

		/** @return an idempotent read */
		public PreparedStatement read(String cql) {
			return this.session.prepare(base(cql).setIdempotent(true));
		}

		/** @return an idempotent read, prepared without blocking (safe on a driver thread) */
		public java.util.concurrent.CompletionStage<PreparedStatement> readAsync(String cql) {
			return this.session.prepareAsync(base(cql).setIdempotent(true));
		}

		/**
		 * @return a read at exactly the serial consistency the claims use (completes any in-flight Paxos round
		 * first): {@code serial-consistency} when set, else the driver profile's
		 * {@code basic.request.serial-consistency}, which is what a claim without its own serial consistency runs
		 * at. A read at SERIAL while claims ran at LOCAL_SERIAL (or the other way round) would not be guaranteed to
		 * see, and complete, a round the claims' quorum accepted.
		 */
		public PreparedStatement serialRead(String cql) {
			return this.session.prepare(base(cql).setIdempotent(true).setConsistencyLevel(claimsSerialConsistency()));
		}

		private ConsistencyLevel claimsSerialConsistency() {
			return this.options.serialConsistency()
				.orElseGet(() -> DefaultConsistencyLevel.valueOf(this.session.getContext()
					.getConfig()
					.getDefaultProfile()
					.getString(DefaultDriverOption.REQUEST_SERIAL_CONSISTENCY)));
		}

		/** @return a non-idempotent lightweight transaction with the serial consistency, if set */
		public PreparedStatement conditional(String cql) {
			SimpleStatement statement = base(cql).setIdempotent(false);
			if (this.options.serialConsistency().isPresent()) {
				statement = statement.setSerialConsistencyLevel(this.options.serialConsistency().get());
			}
			return this.session.prepare(statement);
		}

	}

}
