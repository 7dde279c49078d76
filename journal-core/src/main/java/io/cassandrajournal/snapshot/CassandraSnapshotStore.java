package io.cassandrajournal.snapshot;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AppendValidation;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.JournalTables;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.internal.UnreadableSnapshots;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * {@link SnapshotStore} on the reference's {@code snapshots} table ({@code PRIMARY KEY (persistence_id,
 * sequence_nr)}, clustering {@code DESC}): loading the latest snapshot reads one row.
 */
public final class CassandraSnapshotStore implements SnapshotStore {

	private final CqlSession session;

	private final EventSerializer serializer;

	private final CassandraJournalOptions options;

	private final PreparedStatement insert;

	private final PreparedStatement selectLatest;

	private final PreparedStatement deleteOlder;

	private final UnreadableSnapshots unreadable;

	private CassandraSnapshotStore(CqlSession session, CassandraJournalOptions options, EventSerializer serializer) {
		this.session = session;
		this.options = options;
		this.serializer = serializer;
		this.unreadable = new UnreadableSnapshots(serializer);
		JournalStatements.Statements s = new JournalStatements.Statements(session, options);
		String table = options.requireKeyspace() + "." + options.snapshotsTable();
		this.insert = s.write("INSERT INTO " + table + " (persistence_id, sequence_nr, timestamp, payload) VALUES (?, ?, ?, ?)");
		this.selectLatest = s.read("SELECT sequence_nr, timestamp, payload FROM " + table
				+ " WHERE persistence_id = ? AND sequence_nr <= ? LIMIT " + UnreadableSnapshots.CANDIDATES);
		this.deleteOlder = s.write("DELETE FROM " + table + " WHERE persistence_id = ? AND sequence_nr < ?");
	}

	/**
	 * @param session an open session
	 * @param options the options (keyspace, snapshots table, consistency)
	 * @param serializer writes states as JSON
	 * @return a ready store; the table is created or checked
	 */
	public static CassandraSnapshotStore create(CqlSession session, CassandraJournalOptions options,
			EventSerializer serializer) {
		SchemaManager.ensure(session, options, List.of(JournalTables.snapshots(options)));
		return new CassandraSnapshotStore(session, options, Objects.requireNonNull(serializer, "serializer"));
	}

	@Override
	public CompletionStage<Void> save(String persistenceId, long sequenceNr, Object state) {
		String payload;
		try {
			AppendValidation.checkPersistenceId(persistenceId);
			AppendValidation.checkRange(sequenceNr, sequenceNr);
			payload = this.serializer.serialize(state);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return Errors.translating(this.session
			.executeAsync(this.insert.bind(persistenceId, sequenceNr, this.options.clock().millis(), payload))
			.thenApply((rs) -> null), "Saving a snapshot of", persistenceId);
	}

	/**
	 * Reads the newest {@value UnreadableSnapshots#CANDIDATES} snapshots at or below {@code maxSequenceNr} (one
	 * request) and returns the newest that reads as {@code type}; see {@link SnapshotStore#loadLatest}.
	 */
	@Override
	public <S> CompletionStage<Optional<Snapshot<S>>> loadLatest(String persistenceId, long maxSequenceNr,
			Class<S> type) {
		return Errors.translating(this.session.executeAsync(this.selectLatest.bind(persistenceId, maxSequenceNr))
			.thenApply((rs) -> {
				for (Row row : rs.currentPage()) {
					long sequenceNr = row.getLong("sequence_nr");
					Optional<S> state = this.unreadable.read(persistenceId, sequenceNr,
							row.getString("payload"), type);
					if (state.isPresent()) {
						return Optional.of(new Snapshot<>(persistenceId, sequenceNr,
								Instant.ofEpochMilli(row.getLong("timestamp")), state.get()));
					}
				}
				return Optional.<Snapshot<S>>empty();
			}), "Loading a snapshot of", persistenceId);
	}

	@Override
	public CompletionStage<Void> deleteOlderThan(String persistenceId, long sequenceNr) {
		return Errors.translating(this.session.executeAsync(this.deleteOlder.bind(persistenceId, sequenceNr))
			.thenApply((rs) -> null), "Deleting snapshots of", persistenceId);
	}

}
