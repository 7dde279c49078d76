package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.CqlSession;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.Seal;
import io.cassandrajournal.internal.SealConditions;

/**
 * Where this fits: the writer's side of finding 13, part 3 (docs/reliability.md). An append with the tag index on
 * that ended {@link JournalWriteUncertainException} while its rows may have been written (its claim holds: nothing
 * else can write its numbers) is looked at again once {@code in-flight-wait} has passed since its claim's time stamp.
 * If none of its events is in the events table then, a reader may seal its numbers (or already did), and its logged
 * batch, still in a batch log, would land later with tag rows whose events are shadowed. So the writer settles it:
 * it seals the numbers as a replay does and deletes the append's tag rows (it knows them: tags, time stamp, numbers),
 * both with write times later than the batch's, so the append ends absent everywhere, whenever its batch lands. If
 * any of its events is there, nothing is done (the batch applies all or nothing).
 * <p>
 * Best effort, off the caller's path (the append has already failed as uncertain): a failed read or write is retried
 * a few times with a growing delay, then given up with a warning; a live tag feed that meets the rows later skips
 * them ({@code LateTagRows}). A writer that dies before settling leaves the rows to the feeds.
 */
final class UncertainAppends {

	private static final Logger logger = LoggerFactory.getLogger(UncertainAppends.class);

	private static final int ATTEMPTS = 6;

	private static final long FIRST_RETRY_MILLIS = 500;

	private static final long MAX_RETRY_MILLIS = 10_000;

	/** After the wait: the read then starts past the claim's time stamp plus the wait on this clock. */
	private static final long MARGIN_MILLIS = 50;

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final JournalStatements statements;

	private final TagIndexDeletes tagRows;

	private final Seal seal;

	UncertainAppends(CqlSession session, CassandraJournalOptions options, JournalStatements statements) {
		this.session = session;
		this.options = options;
		this.statements = statements;
		this.tagRows = new TagIndexDeletes(session, options);
		this.seal = Seal.withoutMemo(session, options);
	}

	/**
	 * @param options the journal's options
	 * @param session the session
	 * @return whether appends can leave tag rows that a seal does not shadow and the writer may seal: the tag index
	 * on, claims with lightweight transactions (without them nothing keeps another writer off the numbers), and a seal
	 * that holds ({@link SealConditions})
	 */
	static boolean needed(CqlSession session, CassandraJournalOptions options) {
		return options.useTagIndex() && options.lightweightTransactions() && SealConditions.hold(session, options);
	}

	/**
	 * Settles the append later if it ends uncertain with rows that may exist.
	 * @param appended the append's outcome
	 * @param events the append's events (for their tags)
	 * @param timestamp the append's (and its claim's) time stamp, epoch millis
	 * @param started {@link System#nanoTime} before that time stamp was taken
	 * @return {@code appended}, unchanged
	 */
	CompletionStage<AppendResult> watch(CompletionStage<AppendResult> appended, List<EventToAppend> events,
			long timestamp, long started) {
		return appended.whenComplete((result, error) -> {
			if (error != null && Errors.unwrap(error) instanceof JournalWriteUncertainException uncertain
					&& uncertain.rowsMayExist()) {
				long due = started + this.options.inFlightWait().toNanos() + TimeUnit.MILLISECONDS.toNanos(MARGIN_MILLIS);
				later(Math.max(0, TimeUnit.NANOSECONDS.toMillis(due - System.nanoTime())),
						() -> attempt(uncertain, events, timestamp, 1, FIRST_RETRY_MILLIS));
			}
		});
	}

	private static void later(long delayMillis, Runnable action) {
		CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS).execute(action);
	}

	private void attempt(JournalWriteUncertainException append, List<EventToAppend> events, long timestamp, int attempt,
			long backoff) {
		settle(append, events, timestamp).whenComplete((settled, error) -> {
			if (error == null || this.session.isClosed()) {
				// Settled, or the application is shutting down (a dead writer's rows are left to the feeds).
				return;
			}
			if (attempt >= ATTEMPTS) {
				logger.warn("Could not settle the uncertain append {}..{} to '{}' after {} attempts ({}): if its batch "
						+ "lands after its numbers were sealed, its tag rows stay until a live tag feed meets them",
						append.firstSequenceNr(), append.lastSequenceNr(), append.persistenceId(), attempt,
						Errors.unwrap(error).getMessage());
				return;
			}
			later(backoff, () -> attempt(append, events, timestamp, attempt + 1, Math.min(backoff * 2, MAX_RETRY_MILLIS)));
		});
	}

	/** @return whether it sealed the append (none of its events there), false if some of its events are there */
	CompletionStage<Boolean> settle(JournalWriteUncertainException append, List<EventToAppend> events, long timestamp) {
		String id = append.persistenceId();
		long first = append.firstSequenceNr();
		long last = append.lastSequenceNr();
		long firstPartition = partitionOf(first);
		long lastPartition = partitionOf(last);
		long[] present = { 0 };
		CompletionStage<Void> reads = CompletableFuture.completedFuture(null);
		for (long p = firstPartition; p <= lastPartition; p++) {
			long partition = p;
			reads = reads.thenCompose((ignored) -> AsyncPaging.forEachRow(
					this.session.executeAsync(this.statements.selectEvents.bind(id, partition, first, last)),
					(row) -> present[0]++));
		}
		return reads.thenCompose((ignored) -> {
			if (present[0] > 0) {
				return CompletableFuture.completedFuture(false);
			}
			return this.seal.write(id, first, last, this.seal.writeTime(timestamp))
				.thenCompose((sealed) -> this.tagRows.delete(keys(id, first, events, timestamp)))
				.thenApply((deleted) -> {
					logger.warn("The uncertain append {}..{} to '{}' has no event in-flight-wait ({}) after its claim: "
							+ "its numbers are sealed and its tag rows deleted, so a batch of it still on its way shows "
							+ "nowhere (the append is absent)", first, last, id, this.options.inFlightWait());
					return true;
				});
		});
	}

	private static List<TagIndexDeletes.Key> keys(String id, long first, List<EventToAppend> events, long timestamp) {
		List<TagIndexDeletes.Key> keys = new ArrayList<>();
		for (int i = 0; i < events.size(); i++) {
			for (String tag : events.get(i).tags()) {
				keys.add(new TagIndexDeletes.Key(tag, timestamp, id, first + i));
			}
		}
		return keys;
	}

	private long partitionOf(long sequenceNr) {
		return (sequenceNr - 1) / this.options.partitionSize();
	}

}
