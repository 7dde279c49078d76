package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

import com.datastax.oss.driver.api.core.CqlSession;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AppendValidation;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.JournalTables;
import io.cassandrajournal.internal.RecordedLayout;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.internal.TableDefinition;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * The {@link Journal} on Apache Cassandra, with the reference implementation's tables and contracts.
 * <p>
 * <b>Appends.</b> Each append claims its sequence range with one lightweight transaction on the
 * persistenceId's {@code metadata} row ({@code INSERT ... IF NOT EXISTS} for the first append,
 * {@code UPDATE ... IF max_sequence_nr = ?} after), so of two concurrent writers exactly one wins and the
 * other gets {@link JournalConcurrencyException} with the winner's head. The events then go in one unlogged
 * batch per {@code partition_nr} bucket; with the tag index on, the events and their tag index rows go in one
 * logged batch, all or nothing (appends too large for one batch: the events, then the tag rows). If a write
 * certainly failed, the claim is released (conditionally on the claimed value) and the same append can be
 * retried; if it may have applied, the append fails with {@link JournalWriteUncertainException}.
 * <p>
 * <b>The crash window.</b> A process that dies between claim and batch leaves a gap: the head is above
 * the highest stored event. {@link #checkConsistency(String)} reports it; replays skip it and the next
 * append continues after the head.
 * <p>
 * <b>Deletes.</b> {@link #deleteTo(String, long)} deletes up to the stored head at most (so
 * {@code Long.MAX_VALUE} means "everything stored"), removes the events' tag index rows before the events, and
 * records how far it deleted in a table of ours ({@code <metadataTable>_deleted_to}), so the consistency check
 * does not report a deleted range as a gap. With the tag index on it deletes a settled range only: numbers of
 * the range claimed by another writer and not visible yet are waited for (up to {@code in-flight-wait} after
 * their claim), so a late append's tag rows are found and deleted too.
 * <p>
 * <b>Better than the reference.</b> Replays read every page (the reference reads the driver's first
 * page only), and a claim whose Paxos round timed out is resolved with a serial read instead of being
 * reported as failed when it actually won.
 * <p>
 * Create one per application with {@link #create(CqlSession, CassandraJournalOptions, EventSerializer)}; it
 * is thread-safe and does not own the session.
 */
public final class CassandraJournal implements Journal {

	private static final Logger logger = LoggerFactory.getLogger(CassandraJournal.class);

	private final CassandraJournalOptions options;

	private final EventSerializer serializer;

	private final AppendWriter writer;

	private final EventReader reader;

	private final ContiguousReplay contiguous;

	private final ConsistencyChecker checker;

	private final EventDeleter deleter;

	private final JournalStatements statements;

	private final PersistenceIdReader persistenceIds;

	private final CqlSession session;

	private final List<AppendListener> listeners = new CopyOnWriteArrayList<>();

	private final JournalMetrics metrics;

	private CassandraJournal(CqlSession session, CassandraJournalOptions options, EventSerializer serializer,
			JournalMetrics metrics) {
		this.session = session;
		this.metrics = metrics;
		this.options = options;
		this.serializer = serializer;
		this.statements = new JournalStatements(session, options);
		this.writer = new AppendWriter(session, options, this.statements, metrics);
		this.reader = new EventReader(session, options, this.statements, serializer);
		DeletionMarks marks = new DeletionMarks(session, options);
		this.contiguous = new ContiguousReplay(session, options, this.reader, marks);
		this.checker = new ConsistencyChecker(session, this.statements, this.reader, marks);
		this.deleter = new EventDeleter(session, options, this.statements, this.reader, marks);
		this.persistenceIds = new PersistenceIdReader(session, options);
	}

	/**
	 * Checks the keyspace, creates or checks the tables, and prepares every statement. Call
	 * {@link #verifyLayout} first and pass the options it returns: they carry the keyspace's recorded layout
	 * ({@code slice-hash}), and nothing more is read. Options that leave {@code slice-hash} unset make this factory
	 * look the layout record up itself (a look-up in {@code system_schema.tables} and a serial read): the safe
	 * default for a keyspace recorded by an older version, but on a new keyspace it takes the default
	 * ({@code murmur3}) when no record exists yet, even if another instance records another function a moment later.
	 * @param session an open session (not closed by the journal)
	 * @param options the options; the keyspace must be set and exist
	 * @param serializer turns payloads into JSON text
	 * @return a ready journal
	 * @throws io.cassandrajournal.JournalSchemaException if the keyspace or a table is missing or wrong
	 */
	public static CassandraJournal create(CqlSession session, CassandraJournalOptions options,
			EventSerializer serializer) {
		return create(session, options, serializer, JournalMetrics.NONE);
	}

	/**
	 * As {@link #create(CqlSession, CassandraJournalOptions, EventSerializer)}, recording every operation.
	 * @param session an open session (not closed by the journal)
	 * @param options the options
	 * @param serializer turns payloads into JSON text
	 * @param metrics told about appends, conflicts and replays
	 * @return a ready journal
	 */
	public static CassandraJournal create(CqlSession session, CassandraJournalOptions options,
			EventSerializer serializer, JournalMetrics metrics) {
		Objects.requireNonNull(session, "session");
		Objects.requireNonNull(options, "options");
		Objects.requireNonNull(serializer, "serializer");
		Objects.requireNonNull(metrics, "metrics");
		SchemaManager.ensure(session, options, tables(options));
		// An unset slice-hash is the keyspace's recorded one (options() shows it).
		return new CassandraJournal(session, RecordedLayout.adopt(session, options), serializer, metrics);
	}

	/**
	 * Records the layout settings (use-tag-index, tag-index-table, tag-bucketing, tag-slice-groups, partition-size,
	 * persistence-id-buckets) in {@code <eventsTable>_layout} on the first call against a keyspace, and on every
	 * later call refuses settings that differ: instances with different layouts silently miss or misread each
	 * other's events. The Spring Boot starter calls it at start-up; call it once at start-up when using the core
	 * alone. A record that lacks settings (written by an older version) gets them added by a lightweight
	 * transaction, then compared: a setting whose absence has a meaning is added with that meaning
	 * (tag-slice-groups: 0, no sliced copies), so an instance configured otherwise is refused; the others with this
	 * instance's value. A keyspace that has events but no record (an older version, the reference implementation, a
	 * deleted record) gets this instance's settings recorded, with tag-slice-groups 0, and a warning, once its
	 * partition size matches the events and {@code slice-hash} is set: left unset, the start is refused (the events
	 * do not show which function put their entities in slices). To change a setting deliberately (turning the tag
	 * index on before a backfill, more persistenceId buckets, tag-slice-groups after a backfill), stop every instance
	 * and update the record; never delete it (the next start would record its own values). {@code slice-hash} left unset
	 * ({@link CassandraJournalOptions#configuredSliceHash()} empty) is not compared but adopted: a new keyspace
	 * records murmur3, an existing record's function is kept ({@code string-hash} for a record written before the
	 * setting existed, added to the record); set, it is compared like the others. Call it before building the
	 * journal, read journal and backfill, and build them from the options it returns: the record is then read once
	 * per start, and every part uses the function the record holds, also when another instance recorded it first.
	 * @param session an open session
	 * @param options this instance's options
	 * @return the options with the recorded values of the settings they leave unset ({@code slice-hash}), as the
	 * journal, read journal and projections built from them use (their factories adopt them too)
	 * @throws io.cassandrajournal.JournalLayoutMismatchException naming every setting that differs, with both
	 * values
	 * @throws io.cassandrajournal.JournalSchemaException if a table is missing and may not be created (the events
	 * table included, checked before anything is recorded), or the keyspace has events but no record and
	 * {@code slice-hash} is unset, or the events were written with another partition size
	 */
	public static CassandraJournalOptions verifyLayout(CqlSession session, CassandraJournalOptions options) {
		Map<String, String> recorded = LayoutRecord.check(session, options);
		if (options.configuredSliceHash().isPresent()) {
			return options;
		}
		String table = options.requireKeyspace() + "." + RecordedLayout.tableName(options);
		return options.withSliceHash(RecordedLayout.sliceHash(table, recorded.get(RecordedLayout.SLICE_HASH)));
	}

	/**
	 * @param options the journal options
	 * @return the names of the tables this journal needs with these options
	 */
	public static List<String> requiredTables(CassandraJournalOptions options) {
		return tables(options).stream().map(TableDefinition::name).toList();
	}

	private static List<TableDefinition> tables(CassandraJournalOptions options) {
		List<TableDefinition> tables = new ArrayList<>(List.of(JournalTables.events(options),
				JournalTables.metadata(options), JournalTables.allIds(options), DeletionMarks.table(options)));
		if (options.useTagIndex()) {
			tables.addAll(JournalTables.tagIndexTables(options));
		}
		return tables;
	}

	@Override
	public CompletionStage<AppendResult> append(String persistenceId, long expectedSequenceNr,
			List<EventToAppend> events) {
		List<String> payloads;
		try {
			payloads = AppendValidation.check(persistenceId, expectedSequenceNr, events, this.serializer);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		long started = System.nanoTime();
		return Errors.translating(this.writer.append(persistenceId, expectedSequenceNr, events, payloads),
				"Append to", persistenceId)
			.whenComplete((result, error) -> {
				if (error == null) {
					this.metrics.appended(result, java.time.Duration.ofNanos(System.nanoTime() - started));
					notifyListeners(result);
				}
				else if (Errors.unwrap(error) instanceof JournalConcurrencyException) {
					this.metrics.conflict(persistenceId);
				}
				else {
					this.metrics.appendFailed(persistenceId, Errors.unwrap(error));
				}
			});
	}

	@Override
	public <E> CompletionStage<Long> replay(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Class<E> payloadType, Consumer<? super PersistentEvent<E>> consumer) {
		CompletionStage<Long> invalid = AppendValidation.failure(() -> {
			AppendValidation.checkPersistenceId(persistenceId);
			AppendValidation.checkRange(fromSequenceNr, toSequenceNr);
		});
		if (invalid != null) {
			return invalid;
		}
		long started = System.nanoTime();
		java.util.concurrent.atomic.AtomicLong count = new java.util.concurrent.atomic.AtomicLong();
		return Errors.translating(this.reader.replay(persistenceId, fromSequenceNr, toSequenceNr, payloadType, (event) -> {
			count.incrementAndGet();
			consumer.accept(event);
		}), "Replay of", persistenceId).whenComplete((last, error) -> {
			if (error == null) {
				this.metrics.replayed(count.get(), java.time.Duration.ofNanos(System.nanoTime() - started));
			}
		});
	}

	@Override
	public CompletionStage<Long> replayRaw(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Consumer<? super PersistentEvent<String>> consumer) {
		CompletionStage<Long> invalid = AppendValidation.failure(() -> {
			AppendValidation.checkPersistenceId(persistenceId);
			AppendValidation.checkRange(fromSequenceNr, toSequenceNr);
		});
		if (invalid != null) {
			return invalid;
		}
		return Errors.translating(this.reader.replayRaw(persistenceId, fromSequenceNr, toSequenceNr, consumer),
				"Replay of", persistenceId);
	}

	@Override
	public <E> CompletionStage<ReplayResult> replayContiguous(String persistenceId, long fromSequenceNr,
			long toSequenceNr, Class<E> payloadType, Consumer<? super PersistentEvent<E>> consumer) {
		CompletionStage<ReplayResult> invalid = AppendValidation.failure(() -> {
			AppendValidation.checkPersistenceId(persistenceId);
			AppendValidation.checkRange(fromSequenceNr, toSequenceNr);
		});
		if (invalid != null) {
			return invalid;
		}
		long started = System.nanoTime();
		java.util.concurrent.atomic.AtomicLong count = new java.util.concurrent.atomic.AtomicLong();
		return Errors.translating(this.contiguous.replay(persistenceId, fromSequenceNr, toSequenceNr, payloadType, false,
				(PersistentEvent<E> event) -> {
					count.incrementAndGet();
					consumer.accept(event);
				}), "Replay of", persistenceId).whenComplete((result, error) -> {
					if (error == null) {
						this.metrics.replayed(count.get(), java.time.Duration.ofNanos(System.nanoTime() - started));
					}
				});
	}

	@Override
	public CompletionStage<ReplayResult> replayContiguousRaw(String persistenceId, long fromSequenceNr,
			long toSequenceNr, Consumer<? super PersistentEvent<String>> consumer) {
		return replayContiguousRaw(persistenceId, fromSequenceNr, toSequenceNr, false, consumer);
	}

	@Override
	public CompletionStage<ReplayResult> replayContiguousRawHoldingEnd(String persistenceId, long fromSequenceNr,
			long toSequenceNr, Consumer<? super PersistentEvent<String>> consumer) {
		return replayContiguousRaw(persistenceId, fromSequenceNr, toSequenceNr, true, consumer);
	}

	private CompletionStage<ReplayResult> replayContiguousRaw(String persistenceId, long fromSequenceNr,
			long toSequenceNr, boolean holdsUnsealedEnd, Consumer<? super PersistentEvent<String>> consumer) {
		CompletionStage<ReplayResult> invalid = AppendValidation.failure(() -> {
			AppendValidation.checkPersistenceId(persistenceId);
			AppendValidation.checkRange(fromSequenceNr, toSequenceNr);
		});
		if (invalid != null) {
			return invalid;
		}
		return Errors.translating(this.contiguous.replay(persistenceId, fromSequenceNr, toSequenceNr, null,
				holdsUnsealedEnd, consumer), "Replay of", persistenceId);
	}

	@Override
	public CompletionStage<Long> highestSequenceNr(String persistenceId) {
		CompletionStage<Long> invalid = AppendValidation.failure(() -> AppendValidation.checkPersistenceId(persistenceId));
		if (invalid != null) {
			return invalid;
		}
		return Errors.translating(this.reader.head(persistenceId), "Reading the head of", persistenceId);
	}

	@Override
	public CompletionStage<Void> deleteTo(String persistenceId, long toSequenceNr) {
		CompletionStage<Void> invalid = AppendValidation.failure(() -> {
			AppendValidation.checkPersistenceId(persistenceId);
			AppendValidation.checkRange(1, toSequenceNr);
		});
		if (invalid != null) {
			return invalid;
		}
		return Errors.translating(this.deleter.deleteTo(persistenceId, toSequenceNr), "Deleting events of",
				persistenceId);
	}

	@Override
	public CompletionStage<ConsistencyReport> checkConsistency(String persistenceId) {
		CompletionStage<ConsistencyReport> invalid = AppendValidation.failure(() -> AppendValidation.checkPersistenceId(persistenceId));
		if (invalid != null) {
			return invalid;
		}
		return Errors.translating(this.checker.check(persistenceId), "Consistency check of", persistenceId);
	}

	@Override
	public CompletionStage<List<String>> persistenceIds(@Nullable String afterId, int limit) {
		if (limit < 1) {
			return CompletableFuture.failedFuture(new IllegalArgumentException("limit must be at least 1, was " + limit));
		}
		return Errors.translating(this.persistenceIds.page(afterId, limit), "Listing persistenceIds after",
				String.valueOf(afterId));
	}

	@Override
	public void addAppendListener(AppendListener listener) {
		this.listeners.add(Objects.requireNonNull(listener, "listener"));
	}

	@Override
	public void removeAppendListener(AppendListener listener) {
		this.listeners.remove(listener);
	}

	/** @return the options this journal was created with */
	public CassandraJournalOptions options() {
		return this.options;
	}

	/** @return the serializer this journal writes payloads with */
	public EventSerializer serializer() {
		return this.serializer;
	}

	private void notifyListeners(AppendResult result) {
		for (AppendListener listener : this.listeners) {
			try {
				listener.onAppended(result);
			}
			catch (RuntimeException ex) {
				logger.warn("Append listener {} failed for {}", listener, result, ex);
			}
		}
	}

}
