package io.cassandrajournal.state;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Row;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AppendValidation;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.JournalTables;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * {@link DurableStateStore} on a {@code durable_state} table: revision 1 is written with
 * {@code INSERT ... IF NOT EXISTS}, later revisions with {@code UPDATE ... IF revision = ?}, both
 * lightweight transactions with the configured serial consistency. A write whose outcome is unknown (a
 * timeout after Cassandra may have applied it) is settled by reading the row back at the serial consistency.
 */
public final class CassandraDurableStateStore implements DurableStateStore {

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final EventSerializer serializer;

	private final PreparedStatement select;

	private final PreparedStatement serialSelect;

	private final PreparedStatement insert;

	private final PreparedStatement update;

	private final PreparedStatement delete;

	private CassandraDurableStateStore(CqlSession session, CassandraJournalOptions options, EventSerializer serializer) {
		this.session = session;
		this.options = options;
		this.serializer = serializer;
		JournalStatements.Statements s = new JournalStatements.Statements(session, options);
		String table = options.requireKeyspace() + "." + options.durableStateTable();
		this.select = s.read("SELECT revision, payload, updated_at FROM " + table + " WHERE persistence_id = ?");
		this.serialSelect = s.serialRead("SELECT revision, payload FROM " + table + " WHERE persistence_id = ?");
		this.insert = s.conditional("INSERT INTO " + table
				+ " (persistence_id, revision, payload, updated_at) VALUES (?, ?, ?, ?) IF NOT EXISTS");
		this.update = s.conditional("UPDATE " + table
				+ " SET revision = ?, payload = ?, updated_at = ? WHERE persistence_id = ? IF revision = ?");
		this.delete = s.conditional("DELETE FROM " + table + " WHERE persistence_id = ? IF revision = ?");
	}

	/**
	 * @param session an open session
	 * @param options the options (keyspace, durable state table, consistency)
	 * @param serializer writes values as JSON
	 * @return a ready store; the table is created or checked
	 */
	public static CassandraDurableStateStore create(CqlSession session, CassandraJournalOptions options,
			EventSerializer serializer) {
		SchemaManager.ensure(session, options, List.of(JournalTables.durableState(options)));
		return new CassandraDurableStateStore(session, options, Objects.requireNonNull(serializer, "serializer"));
	}

	@Override
	public <S> CompletionStage<Optional<DurableState<S>>> get(String persistenceId, Class<S> type) {
		return Errors.translating(this.session.executeAsync(this.select.bind(persistenceId)).thenApply((rs) -> {
			Row row = rs.one();
			if (row == null) {
				return Optional.<DurableState<S>>empty();
			}
			return Optional.of(new DurableState<>(persistenceId, row.getLong("revision"),
					Instant.ofEpochMilli(row.getLong("updated_at")),
					this.serializer.deserialize(row.getString("payload"), type)));
		}), "Reading durable state", persistenceId);
	}

	@Override
	public CompletionStage<Void> upsert(String persistenceId, long revision, Object value) {
		String payload;
		try {
			AppendValidation.checkPersistenceId(persistenceId);
			if (revision < 1) {
				throw new IllegalArgumentException("revision must be at least 1, was " + revision);
			}
			payload = this.serializer.serialize(value);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		long now = this.options.clock().millis();
		CompletionStage<AsyncResultSet> write = (revision == 1)
				? this.session.executeAsync(this.insert.bind(persistenceId, 1L, payload, now))
				: this.session.executeAsync(this.update.bind(revision, payload, now, persistenceId, revision - 1));
		CompletionStage<Void> outcome = write.thenApply((rs) -> checkApplied(rs, persistenceId, revision - 1))
			.exceptionallyCompose((error) -> (Errors.unwrap(error) instanceof DriverException driverError)
					? readBack(persistenceId, revision, payload, driverError) : CompletableFuture.failedFuture(error));
		return Errors.translating(outcome, "Writing durable state", persistenceId);
	}

	/**
	 * Settles a write whose outcome the driver could not report (a timeout may hide an applied compare-and-set)
	 * by reading the row at the serial consistency, which first completes any Paxos round left in flight.
	 * @return completes if the row holds this write; fails with the original error if it still holds the
	 * previous revision (not applied) or cannot be read, with a conflict if it holds another write
	 */
	private CompletionStage<Void> readBack(String persistenceId, long revision, String payload, DriverException original) {
		return this.session.executeAsync(this.serialSelect.bind(persistenceId)).handle((rs, readError) -> {
			if (readError != null) {
				throw new CompletionException(original);
			}
			Row row = rs.one();
			long actual = (row != null && !row.isNull("revision")) ? row.getLong("revision") : 0L;
			if (actual == revision && row != null && payload.equals(row.getString("payload"))) {
				return null;
			}
			if (actual == revision - 1) {
				throw new CompletionException(original);
			}
			throw new CompletionException(new DurableStateConflictException(persistenceId, revision - 1, actual));
		});
	}

	@Override
	public CompletionStage<Void> delete(String persistenceId, long revision) {
		return Errors.translating(this.session.executeAsync(this.delete.bind(persistenceId, revision))
			.thenApply((rs) -> {
				long actual = rs.wasApplied() ? revision : currentRevision(rs);
				if (actual != revision && actual != 0) {
					throw new CompletionException(new DurableStateConflictException(persistenceId, revision, actual));
				}
				return (Void) null;
			}), "Deleting durable state", persistenceId);
	}

	private static long currentRevision(AsyncResultSet rs) {
		Row current = rs.one();
		return (current != null && current.getColumnDefinitions().contains("revision") && !current.isNull("revision"))
				? current.getLong("revision") : 0L;
	}

	private static Void checkApplied(AsyncResultSet rs, String persistenceId, long expected) {
		if (rs.wasApplied()) {
			return null;
		}
		long actual = currentRevision(rs);
		throw new CompletionException(new DurableStateConflictException(persistenceId, expected, actual));
	}

}
