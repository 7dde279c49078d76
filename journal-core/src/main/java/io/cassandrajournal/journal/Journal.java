package io.cassandrajournal.journal;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

/**
 * The event journal: an append-only stream of events per persistenceId, with optimistic concurrency.
 * <p>
 * Contract, kept by the Cassandra and the in-memory implementations alike:
 * <ul>
 * <li>An append stores all its events or none, under sequence numbers {@code expected + 1 ..
 * expected + n}, and only if the head is {@code expected}; otherwise it fails with
 * {@link JournalConcurrencyException} carrying the actual head, and writes nothing.</li>
 * <li>Replay delivers a persistenceId's events in sequence order, each once.</li>
 * <li>Invalid arguments (blank persistenceId, negative sequence numbers, no events, a payload that cannot be
 * serialized) fail the returned stage with {@link IllegalArgumentException} or
 * {@link io.cassandrajournal.JournalSerializationException} before anything is written.</li>
 * </ul>
 */
public interface Journal {

	/**
	 * Appends events to one persistenceId.
	 * @param persistenceId the entity's id
	 * @param expectedSequenceNr the head the caller last saw (0 for a new entity)
	 * @param events the events, at least one
	 * @return the stored range; fails with {@link JournalConcurrencyException} if another writer moved the
	 * head, {@link io.cassandrajournal.JournalUnavailableException} if Cassandra failed (nothing stored, unless
	 * it is a {@link JournalWriteUncertainException}: the claim may hold and its events may be stored; reload
	 * before deciding again)
	 */
	CompletionStage<AppendResult> append(String persistenceId, long expectedSequenceNr, List<EventToAppend> events);

	/**
	 * Replays events in sequence order, page by page: memory use does not grow with the number of events.
	 * Payloads are read with {@link io.cassandrajournal.serialization.EventSerializer#deserializeEvent}: an event
	 * an upcaster split reaches the consumer as several events with the stored event's sequence number.
	 * @param <E> the payload type
	 * @param persistenceId the entity's id
	 * @param fromSequenceNr the first sequence number wanted (inclusive, at least 1)
	 * @param toSequenceNr the last one wanted (inclusive); {@code Long.MAX_VALUE} for all
	 * @param payloadType the type payloads are read as
	 * @param consumer called once per event, in order, never concurrently; on a driver thread in the
	 * Cassandra implementation, so it must not block
	 * @return the sequence number of the last event delivered, 0 if none
	 */
	<E> CompletionStage<Long> replay(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Class<E> payloadType, Consumer<? super PersistentEvent<E>> consumer);

	/**
	 * Replays like {@link #replay}, with payloads as the stored JSON text, not deserialized: for tools that copy
	 * rows, and for projections, which deserialize each event where a failure can be handled.
	 * @param persistenceId the entity's id
	 * @param fromSequenceNr the first sequence number wanted (inclusive, at least 1)
	 * @param toSequenceNr the last one wanted (inclusive)
	 * @param consumer called once per event, in order
	 * @return the sequence number of the last event delivered, 0 if none
	 */
	CompletionStage<Long> replayRaw(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Consumer<? super PersistentEvent<String>> consumer);

	/**
	 * Replays like {@link #replay}, without stepping over an event that is claimed but not visible yet: for
	 * deciding on state (entity loads) and for per-entity projections. A sequence number up to the head that
	 * has no event (missing at the end, or in the middle while later ones are visible) may be another
	 * writer's append between its committed claim and its event batch: the replay waits for it, re-reading
	 * with a short backoff, while its claim is younger than the in-flight wait (Cassandra journal:
	 * {@code CassandraJournalOptions.withInFlightWait}, default 30 s; the claim time is the next visible
	 * event's time stamp, or the head's {@code updated_at} for missing numbers at the end). What is still
	 * missing after that is a crash gap: stepped over, logged once, reported in the result (and by
	 * {@link #checkConsistency}). Events are delivered in order, and an event is never delivered before a
	 * missing number below it is either visible or declared a crash gap. Numbers at or below the entity's deletion
	 * mark (how far {@link #deleteTo} has completed) are deleted, not in flight: they are skipped at once, never
	 * waited for, and reported as {@link ReplayResult#deleted()} (docs/reliability.md, finding 19).
	 * @param <E> the payload type
	 * @param persistenceId the entity's id
	 * @param fromSequenceNr the first sequence number wanted (inclusive, at least 1)
	 * @param toSequenceNr the last one wanted (inclusive); {@code Long.MAX_VALUE} for all up to the head
	 * @param payloadType the type payloads are read as
	 * @param consumer called once per event, in order, never concurrently; on a driver thread in the
	 * Cassandra implementation, so it must not block
	 * @return what was covered: every number up to {@link ReplayResult#coveredTo()} was delivered, is a crash
	 * gap or is deleted, and {@code coveredTo} is {@code min(toSequenceNr, head)} (or {@code fromSequenceNr - 1} if that is
	 * lower)
	 */
	<E> CompletionStage<ReplayResult> replayContiguous(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Class<E> payloadType, Consumer<? super PersistentEvent<E>> consumer);

	/**
	 * {@link #replayContiguous} with payloads as the stored JSON text.
	 * @param persistenceId the entity's id
	 * @param fromSequenceNr the first sequence number wanted (inclusive, at least 1)
	 * @param toSequenceNr the last one wanted (inclusive)
	 * @param consumer called once per event, in order
	 * @return what was covered
	 */
	CompletionStage<ReplayResult> replayContiguousRaw(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Consumer<? super PersistentEvent<String>> consumer);

	/**
	 * {@link #replayContiguousRaw} for a reader that never moves past crash gaps at the end of the stream that are
	 * not sealed ({@link ReplayResult#crashGapsSealed()} false): it holds them and reads them again, as a
	 * by-persistenceId projection does. Such a gap may then be reported stepped over without the work that makes
	 * moving past it safe (in the Cassandra journal with seals off, a serial read of the head, a Paxos round on the
	 * row writers claim, on every replay that meets an append in flight at the end). By default the same as
	 * {@link #replayContiguousRaw}.
	 * @param persistenceId the entity's id
	 * @param fromSequenceNr the first sequence number wanted (inclusive, at least 1)
	 * @param toSequenceNr the last one wanted (inclusive)
	 * @param consumer called once per event, in order
	 * @return what was covered
	 */
	default CompletionStage<ReplayResult> replayContiguousRawHoldingEnd(String persistenceId, long fromSequenceNr,
			long toSequenceNr, Consumer<? super PersistentEvent<String>> consumer) {
		return replayContiguousRaw(persistenceId, fromSequenceNr, toSequenceNr, consumer);
	}

	/**
	 * @param persistenceId the entity's id
	 * @return its head: the highest claimed sequence number, 0 for an unknown entity
	 */
	CompletionStage<Long> highestSequenceNr(String persistenceId);

	/**
	 * Deletes the events of a persistenceId up to and including a sequence number (for example after a
	 * snapshot). The head is unchanged: later appends continue after it. A deleted event is gone from every
	 * reader: replay, tag queries and live tag feeds. Work is bounded by the stored events, not by the argument.
	 * Numbers of the range that another writer has claimed and not yet made visible are waited for first, as
	 * replays wait for them (up to the Cassandra journal's {@code in-flight-wait} after their claim). In the
	 * Cassandra journal that is every such number with the tag index on. Without it, nothing is waited for when
	 * the range's last number shows an event; otherwise, with client-side write time stamps (the driver's default),
	 * only a hole at the range's end, and not when an event above the range in the same partition is visible (a late
	 * batch of numbers not waited for is shadowed by the deletion, writers' clocks agreeing within the time from claim
	 * to delete); with time stamps left to the server, every hole of the range.
	 * @param persistenceId the entity's id
	 * @param toSequenceNr the last sequence number to delete; {@code Long.MAX_VALUE} deletes every stored event
	 * @return completes when deleted
	 */
	CompletionStage<Void> deleteTo(String persistenceId, long toSequenceNr);

	/**
	 * Compares the head with the stored events (see {@link ConsistencyReport}).
	 * @param persistenceId the entity's id
	 * @return the report
	 */
	CompletionStage<ConsistencyReport> checkConsistency(String persistenceId);

	/**
	 * Checks every persistenceId of the journal, one page of ids at a time.
	 * @param onGap called for each persistenceId whose report {@linkplain ConsistencyReport#hasGap() has a gap}
	 * @return how many persistenceIds were checked
	 */
	default CompletionStage<Long> checkConsistencyOfAll(Consumer<ConsistencyReport> onGap) {
		return ConsistencySweep.run(this, onGap);
	}

	/**
	 * Lists persistenceIds in ascending order, one page at a time: pass the last id of a page to get the next.
	 * @param afterId the last id of the previous page, or {@code null} to start
	 * @param limit the page size, at least 1
	 * @return at most {@code limit} ids; fewer only on the last page
	 */
	CompletionStage<List<String>> persistenceIds(@Nullable String afterId, int limit);

	/**
	 * @param listener told about every append of this journal instance
	 */
	void addAppendListener(AppendListener listener);

	/**
	 * @param listener a listener added before
	 */
	void removeAppendListener(AppendListener listener);

}
