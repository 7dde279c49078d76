package io.cassandrajournal.journal;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BatchableStatement;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.TagPartitions;

/**
 * The write path of {@link io.cassandrajournal.journal.CassandraJournal}: on a first append, the persistenceId
 * row (before anything else, so events never exist without it); claim the sequence range with one
 * Paxos round on the metadata row, then write the events in one unlogged batch per events partition or, with
 * the tag index on, the events and their tag index rows in one logged batch (all or nothing; see
 * {@link #writeRows}), retrying a failed write a bounded number of times. If a write
 * still fails, the claim is released (conditionally on the claimed value, so a retry with the same expected
 * sequence number succeeds) only when no row of the range can exist; otherwise the range stays claimed and
 * the append fails with {@link JournalWriteUncertainException}, so no sequence number is ever written twice.
 */
final class AppendWriter {

	private static final Logger logger = LoggerFactory.getLogger(AppendWriter.class);

	/**
	 * The largest append (estimated by {@link BatchBytes}, as the node counts it) written as one logged batch: under
	 * Cassandra's
	 * default {@code batch_size_fail_threshold} of 50 KiB, above which a batch over more than one partition is
	 * refused. Larger appends write their events first, then their tag rows.
	 */
	static final long ATOMIC_BATCH_MAX_BYTES = 48 * 1024;

	/**
	 * The shortest request timeout a claim release is sent with ({@link #releaseTimeout}; the request timeout if that
	 * is shorter): with less time left before the writer's deadline the claim is kept.
	 */
	static final Duration RELEASE_FLOOR = Duration.ofMillis(500);

	/**
	 * Room between a release's last possible apply and the writer's deadline: the driver's request timer fires on a
	 * tick (100 ms by default), and the release is handed over a little after its timeout is computed.
	 */
	static final Duration RELEASE_MARGIN = Duration.ofMillis(250);

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final JournalStatements statements;

	/** Only with the tag index on: its tables may not exist otherwise. */
	private final @Nullable TagPartitions tagIndex;

	/** Only with more than one copy of each tag row (the segment-aware index): its events-then-tags writes. */
	private final @Nullable TagCopyWrites tagCopies;

	/** Heads this process wrote without LWT: saves the head read when the expectation matches. */
	private final Map<String, Long> knownHeads = new ConcurrentHashMap<>();

	/** Settles uncertain appends whose rows may land after a seal (finding 13, part 3); null when none can. */
	private final @Nullable UncertainAppends uncertainAppends;

	public AppendWriter(CqlSession session, CassandraJournalOptions options, JournalStatements statements,
			JournalMetrics metrics) {
		this.session = session;
		this.options = options;
		this.statements = statements;
		this.tagIndex = options.useTagIndex() ? TagPartitions.create(session, options) : null;
		this.tagCopies = (this.tagIndex != null && this.tagIndex.copies() > 1)
				? new TagCopyWrites(session, this.tagIndex, metrics, expiringTagRows()) : null;
		if (options.lightweightTransactions() && releaseTimeout(options, 0) == null) {
			logger.warn("in-flight-wait ({}) leaves less than {} after claim-settle-time ({}): an append whose writes "
					+ "fail after its claim never releases the claim (a release could apply after readers may seal its "
					+ "numbers), so every such failure is reported as JournalWriteUncertainException and leaves a gap; keep "
					+ "in-flight-wait well above claim-settle-time", options.inFlightWait(),
					RELEASE_FLOOR.plus(RELEASE_MARGIN), options.claimSettleTime());
		}
		this.uncertainAppends = UncertainAppends.needed(session, options) ? new UncertainAppends(session, options, statements)
				: null;
	}

	public CompletionStage<AppendResult> append(String persistenceId, long expected, List<EventToAppend> events,
			List<String> payloads) {
		if (expected != 0) {
			return appendRows(persistenceId, expected, events, payloads);
		}
		// A first append writes the persistenceId row before anything else (docs/reliability.md, finding 14): events
		// never exist without it, and when it fails nothing is claimed or written, so the append fails plainly and
		// may be retried with the same expected number. Sent in parallel with the events, its failure after the
		// events applied left the entity out of persistenceIds() for good (later appends do not write it). The row
		// is the same for every append to this persistenceId: one left behind by an append that then failed or
		// lost its claim collides with nothing (persistenceIds() may list an id without events, as before).
		BoundStatement idRow = this.statements.insertPersistenceId.bind(
				PersistenceIdBuckets.bucketOf(persistenceId, this.options.persistenceIdBuckets()), persistenceId);
		RowWrites writes = new RowWrites();
		writes.add(false, () -> this.session.executeAsync(idRow));
		return writes.run().thenCompose((written) -> (written.failure() != null)
				? CompletableFuture.<AppendResult>failedFuture(written.failure())
				: appendRows(persistenceId, expected, events, payloads));
	}

	private CompletionStage<AppendResult> appendRows(String persistenceId, long expected, List<EventToAppend> events,
			List<String> payloads) {
		// The deadline's start, before the claim's time stamp: readers wait in-flight-wait from that time stamp.
		long started = System.nanoTime();
		// Before the claim: a deleteTo that saw the claim deletes with a later write time, so its range deletion
		// shadows these rows even when their batch lands after it (docs/reliability.md, finding 7).
		long writeTime = this.session.getContext().getTimestampGenerator().next();
		long timestamp = this.options.clock().millis();
		long last = expected + events.size();
		AppendResult result = new AppendResult(persistenceId, expected + 1, last, Instant.ofEpochMilli(timestamp),
				allTags(events));
		CompletionStage<AppendResult> appended = stamped(persistenceId, expected, events, payloads, started, writeTime,
				timestamp, last, result);
		UncertainAppends uncertain = this.uncertainAppends;
		return (uncertain == null) ? appended : uncertain.watch(appended, events, timestamp, started);
	}

	/** The append once its deadline's start, write time and time stamp are taken. */
	private CompletionStage<AppendResult> stamped(String persistenceId, long expected, List<EventToAppend> events,
			List<String> payloads, long started, long writeTime, long timestamp, long last, AppendResult result) {
		if (!this.options.lightweightTransactions()) {
			return appendWithoutClaim(persistenceId, expected, events, payloads, timestamp, writeTime, result, started);
		}
		return claim(persistenceId, expected, last, timestamp)
			.thenCompose((claimed) -> writeRows(persistenceId, expected, events, payloads, timestamp, writeTime, null,
					started))
			.thenCompose((outcome) -> {
				Throwable failure = outcome.failure();
				if (failure == null) {
					return pastDeadline(started)
							? CompletableFuture.failedFuture(lateWrite(persistenceId, expected + 1, last))
							: CompletableFuture.completedFuture(result);
				}
				if (outcome.rowsMayExist() || Errors.unwrap(failure) instanceof JournalWriteUncertainException) {
					// Releasing would let the next append reuse these numbers next to rows that may exist (a write
					// not sent past the deadline: an earlier attempt of it may have applied).
					return CompletableFuture.failedFuture(uncertain(persistenceId, expected + 1, last, failure));
				}
				Duration timeout = releaseTimeout(this.options, System.nanoTime() - started);
				if (timeout == null) {
					// Too little time left: a reader may be sealing these numbers by the time a release applies (the
					// driver may send it again up to its request timeout, and its coordinator may run the last attempt
					// up to claim-settle-time after that): released, they would be reused under its seal (finding 15,
					// item 5; finding 21, item 6 and its review).
					return CompletableFuture.failedFuture(JournalWriteUncertainException.unreleasedClaim(persistenceId,
							expected + 1, last, Errors.unwrap(failure)));
				}
				return release(persistenceId, expected, last, failure, timeout).<AppendResult>thenApply((released) -> {
					if (!released) {
						// The claim may hold: the caller must learn the range, which is now a gap.
						throw new CompletionException(JournalWriteUncertainException.unreleasedClaim(persistenceId,
								expected + 1, last, Errors.unwrap(failure)));
					}
					throw new CompletionException(failure);
				});
			});
	}

	/**
	 * The writer's deadline (docs/reliability.md, finding 13): a reader steps over and seals a claimed number still
	 * missing {@code in-flight-wait} after its claim's time stamp, so rows acknowledged later than that may already
	 * be shadowed by the seal. One {@link System#nanoTime} call; none with an in-flight wait of zero (readers then
	 * neither wait nor seal).
	 * @param started {@link System#nanoTime} just before the claim's time stamp was taken
	 * @return whether the rows' write completed later than {@link #deadlineNanos} after it
	 */
	private boolean pastDeadline(long started) {
		return this.options.inFlightWait().toNanos() > 0
				&& System.nanoTime() - started > deadlineNanos(this.options.inFlightWait());
	}

	/**
	 * The request timeout a claim release is sent with now, so that it cannot apply after the writer's deadline, from
	 * which a reader may seal the numbers (finding 15, item 5): the driver's request timeout covers all its attempts
	 * (it sends even a non-idempotent release again after an unavailable or a read timeout; finding 21, item 6), and a
	 * coordinator may still run the last attempt up to {@code claim-settle-time} after it was sent (finding 20). So the
	 * timeout is what is left before the deadline less the settle time and {@link #RELEASE_MARGIN}, at most the
	 * journal's request timeout; none below {@link #RELEASE_FLOOR}: the release is not sent, the claim is kept. Before
	 * the review of finding 21's items 4-7 the full request timeout was assumed, so a wait under request-timeout plus
	 * claim-settle-time (a 10 s wait with the default 10 s request timeout) never released a claim. The journal's
	 * request timeout with an in-flight wait of zero (readers then never seal).
	 * @param options the journal's options
	 * @param elapsedNanos since the deadline's start ({@link System#nanoTime} just before the claim's time stamp)
	 * @return the release's request timeout, or null when it is not to be sent
	 */
	static @Nullable Duration releaseTimeout(CassandraJournalOptions options, long elapsedNanos) {
		Duration requestTimeout = options.requestTimeout();
		if (options.inFlightWait().isZero()) {
			return requestTimeout;
		}
		long left = deadlineNanos(options.inFlightWait()) - elapsedNanos - options.claimSettleTime().toNanos()
				- RELEASE_MARGIN.toNanos();
		long timeout = Math.min(requestTimeout.toNanos(), left);
		return (timeout < Math.min(RELEASE_FLOOR.toNanos(), requestTimeout.toNanos())) ? null : Duration.ofNanos(timeout);
	}

	/**
	 * @param failure the rows' failure: already {@link JournalWriteUncertainException} when the events completed
	 * past the deadline and the tag rows were not written ({@link #eventsThenTags})
	 * @return the append's uncertain outcome
	 */
	private static JournalWriteUncertainException uncertain(String persistenceId, long first, long last,
			Throwable failure) {
		return (Errors.unwrap(failure) instanceof JournalWriteUncertainException uncertain) ? uncertain
				: new JournalWriteUncertainException(persistenceId, first, last, failure);
	}

	/**
	 * @param inFlightWait the readers' in-flight wait
	 * @return the writer's deadline after the start of an append: the wait less a margin (1 % of it, at least 5 ms)
	 * for the clocks' reading and the time between the deadline's start and the claim's time stamp
	 */
	static long deadlineNanos(Duration inFlightWait) {
		long wait = inFlightWait.toNanos();
		return wait - Math.max(TimeUnit.MILLISECONDS.toNanos(5), wait / 100);
	}

	private JournalWriteUncertainException lateWrite(String persistenceId, long first, long last) {
		return JournalWriteUncertainException.lateWrite(persistenceId, first, last, this.options.inFlightWait());
	}

	private CompletionStage<Void> claim(String persistenceId, long expected, long claimed, long timestamp) {
		BoundStatement statement = (expected == 0)
				? this.statements.claimFirst.bind(persistenceId, claimed, timestamp)
				: this.statements.claimNext.bind(claimed, timestamp, persistenceId, expected);
		return claim(statement, expected == 0, persistenceId, expected, claimed, timestamp);
	}

	private CompletionStage<Void> claim(BoundStatement statement, boolean ifNotExists, String persistenceId,
			long expected, long claimed, long timestamp) {
		long sent = System.nanoTime();
		return this.session.executeAsync(statement).handle((rs, error) -> {
			if (error != null) {
				// A Paxos round that timed out (on the server or in the driver, after sending) may have applied.
				// Unavailable and overloaded are no proof for a Paxos round: Cassandra raises them in the commit phase
				// too, after a quorum accepted the proposal (finding 6 of docs/reliability.md).
				if (Errors.unwrap(error) instanceof DriverException && !WriteOutcome.paxosRoundCertainlyNotApplied(error)) {
					return afterServerGaveUp(sent, error)
						.thenCompose((ignored) -> resolveUncertainClaim(persistenceId, expected, claimed, timestamp, error));
				}
				return CompletableFuture.<Void>failedFuture(error);
			}
			if (rs.wasApplied()) {
				return CompletableFuture.<Void>completedFuture(null);
			}
			Long head = head(rs.one());
			if (ifNotExists && (head == null || head == 0)) {
				// The reference implementation releases a failed first claim by writing 0 rather than deleting
				// the row: a row without a head is no row. One more Paxos round, only in this case.
				return claim(this.statements.claimNext.bind(claimed, timestamp, persistenceId, head), false,
						persistenceId, expected, claimed, timestamp);
			}
			return CompletableFuture.<Void>failedFuture(
					new JournalConcurrencyException(persistenceId, expected, (head != null) ? head : 0L));
		}).thenCompose((stage) -> stage);
	}

	/**
	 * When the serial read that resolves an uncertain claim may run (docs/reliability.md, finding 20). A serial read
	 * completes a round a quorum accepted; it says nothing of a round its coordinator is still running: a
	 * coordinator inside its contention loop proposes again after the read and the claim applies then. An error the
	 * coordinator answered with ({@code WriteTimeoutException} CAS, unavailable, overloaded) comes once it gave up
	 * on the round: the read may run at once. An error the driver made without an answer (a lost connection, a
	 * client-side timeout) says nothing of the coordinator: the read waits until
	 * {@link CassandraJournalOptions#claimSettleTime()} has passed since the claim was sent. The wait needs no room
	 * before the writer's deadline: an append whose claim is resolved writes nothing, whatever the resolution says.
	 * @param sent {@link System#nanoTime} just before the claim was handed to the driver
	 * @param error the claim's failure
	 * @return completes when the serial read may run
	 */
	private CompletionStage<Void> afterServerGaveUp(long sent, Throwable error) {
		long waitNanos = settleWaitNanos(sent, System.nanoTime(), error, this.options.claimSettleTime());
		if (waitNanos <= 0) {
			return CompletableFuture.completedFuture(null);
		}
		logger.debug("Claim failed without an answer from its coordinator ({}); resolving it in {} ms",
				Errors.unwrap(error).getMessage(), TimeUnit.NANOSECONDS.toMillis(waitNanos));
		return CompletableFuture.runAsync(() -> {
		}, CompletableFuture.delayedExecutor(waitNanos, TimeUnit.NANOSECONDS));
	}

	/**
	 * How long the serial read that resolves a failed claim waits ({@link #afterServerGaveUp}): not at all after the
	 * coordinator's own answer; otherwise until {@code settle} has passed since the claim was sent, or since now when
	 * the driver may have sent it more than once ({@link WriteOutcome#mayHaveBeenResent}: it retries even a
	 * non-idempotent claim after an unavailable or a read timeout, and the last attempt's send time is not known).
	 * @param sent {@link System#nanoTime} just before the claim was handed to the driver
	 * @param now {@link System#nanoTime} when the failure is handled
	 * @param error the claim's failure
	 * @param settle the claim settle time
	 * @return nanoseconds to wait, never negative
	 */
	static long settleWaitNanos(long sent, long now, Throwable error, Duration settle) {
		if (WriteOutcome.answeredByCoordinator(error)) {
			return 0;
		}
		long settleNanos = settle.toNanos();
		if (WriteOutcome.mayHaveBeenResent(error)) {
			return settleNanos;
		}
		return Math.max(0, settleNanos - (now - sent));
	}

	/**
	 * A Paxos round that timed out (or whose connection failed after sending) may or may not have been
	 * applied. A serial read completes any round a quorum accepted, and runs only once no coordinator can still be
	 * running this one ({@link #afterServerGaveUp}): a head still at the expected number means the claim did not
	 * apply and never will. A head at our
	 * claimed number with our time stamp does not prove the claim is ours: another writer with the same
	 * expected number, event count and millisecond leaves the same row, and the reference schema holds
	 * nothing else to tell the two apart. So the claim is never assumed: the append writes nothing and fails
	 * as having lost (if the claim was ours, its numbers stay a gap, as after a crash). A head above our claimed
	 * number may sit on our claim or on another writer's: the append writes nothing and fails as uncertain
	 * with its range (the claim may hold), never as a plain conflict, which would say nothing of it holds.
	 */
	private CompletionStage<Void> resolveUncertainClaim(String persistenceId, long expected, long claimed,
			long timestamp, Throwable timeout) {
		return this.session.executeAsync(this.statements.selectHeadSerial.bind(persistenceId))
			.handle((rs, error) -> {
				if (error != null) {
					// Neither the claim's outcome nor the head is known: nothing was written, the claim may hold.
					throw new CompletionException(JournalWriteUncertainException.unresolvedClaim(persistenceId,
							expected + 1, claimed, Errors.unwrap(timeout)));
				}
				Row row = rs.one();
				Long found = head(row);
				long head = (found != null) ? found : 0L;
				if (head == expected) {
					throw new CompletionException(new JournalUnavailableException("Append to '" + persistenceId
							+ "' failed: its claim of " + (expected + 1) + ".." + claimed + " timed out and did not apply ("
							+ Errors.unwrap(timeout).getMessage() + "); retrying with the same expected sequence "
							+ "number is safe", Errors.unwrap(timeout)));
				}
				if (head > claimed) {
					// Another writer claimed above our range: from our claim (then ours held and its numbers are a gap)
					// or from our expected number (then ours did not apply). Nothing tells the two apart.
					throw new CompletionException(JournalWriteUncertainException.overtakenClaim(persistenceId,
							expected + 1, claimed, head, Errors.unwrap(timeout)));
				}
				if (head == claimed && row != null && !row.isNull("updated_at") && row.getLong("updated_at") == timestamp) {
					logger.warn("Claim of {}..{} on '{}' timed out; the head holds that claim with this append's time "
							+ "stamp, which cannot tell it from a concurrent writer's: nothing written, reported as a "
							+ "conflict (if the claim was this append's, the numbers stay a gap)", expected + 1, claimed,
							persistenceId);
				}
				throw new CompletionException(new JournalConcurrencyException(persistenceId, expected, head));
			});
	}

	/** @return the head a claim's result or a head read shows; null when the row or its head is missing */
	private static @Nullable Long head(@Nullable Row row) {
		if (row == null || !row.getColumnDefinitions().contains("max_sequence_nr") || row.isNull("max_sequence_nr")) {
			return null;
		}
		return row.getLong("max_sequence_nr");
	}

	/**
	 * @param timeout the release's request timeout ({@link #releaseTimeout})
	 * @return whether the claim was released: applied, or not applied with the head back at {@code expected} (no row
	 * for a first append), which only this release can have done (the driver sent it again after an attempt that
	 * applied: the head moves down only by a release of a claim, and a claim from {@code expected} needs this release
	 * first)
	 */
	private CompletionStage<Boolean> release(String persistenceId, long expected, long claimed, Throwable cause,
			Duration timeout) {
		BoundStatement statement = (expected == 0) ? this.statements.releaseFirst.bind(persistenceId, claimed)
				: this.statements.claimNext.bind(expected, this.options.clock().millis(), persistenceId, claimed);
		CompletionStage<AsyncResultSet> release = this.session.executeAsync(statement.setTimeout(timeout));
		return release.handle((rs, error) -> {
			// wasApplied() before one(): the driver refuses it once the row is consumed.
			boolean applied = error == null && rs.wasApplied();
			if (error == null && !applied && releasedBefore(rs.one(), expected)) {
				logger.debug("Release of claim {} on '{}' found the head at {}: an earlier attempt of it applied",
						claimed, persistenceId, expected);
				return true;
			}
			if (error != null) {
				logger.warn("Append to '{}' failed ({}) and releasing its claim {} failed too ({}): sequence numbers "
						+ "{}..{} stay claimed without events (a gap the consistency check reports)", persistenceId,
						Errors.unwrap(cause).getMessage(), claimed, Errors.unwrap(error).getMessage(), expected + 1,
						claimed);
			}
			else if (!applied) {
				logger.warn("Append to '{}' failed and its claim {} was already moved on by another writer; not released",
						persistenceId, claimed);
			}
			return applied;
		});
	}

	/**
	 * @param row the row a release that was not applied returned (none when a first append's row is gone)
	 * @param expected the append's expected number
	 * @return whether it shows the head at {@code expected}: released
	 */
	private static boolean releasedBefore(@Nullable Row row, long expected) {
		Long head = head(row);
		return (head == null) ? expected == 0 : head == expected;
	}

	private CompletionStage<AppendResult> appendWithoutClaim(String persistenceId, long expected,
			List<EventToAppend> events, List<String> payloads, long timestamp, long writeTime, AppendResult result,
			long started) {
		// The documented unsafe path: check the head, write. Two writers that both see the same head both pass
		// and the later batch silently overwrites the earlier one's events. The head this process last wrote
		// is trusted when it matches the expectation (the check is advisory anyway); otherwise it is read.
		Long known = this.knownHeads.get(persistenceId);
		CompletionStage<Long> head = (known != null && known == expected) ? CompletableFuture.completedFuture(known)
				: this.session.executeAsync(this.statements.selectHead.bind(persistenceId)).thenApply((rs) -> {
					Row row = rs.one();
					return (row != null) ? row.getLong("max_sequence_nr") : 0L;
				});
		return head.thenCompose((current) -> {
			if (current != expected) {
				this.knownHeads.remove(persistenceId);
				return CompletableFuture.failedFuture(new JournalConcurrencyException(persistenceId, expected, current));
			}
			// The head rides in the first events batch: one request, as without a journal.
			return writeRows(persistenceId, expected, events, payloads, timestamp, writeTime,
					this.statements.setHead.bind(result.lastSequenceNr(), timestamp, persistenceId), started)
				.thenApply((outcome) -> {
					Throwable failure = outcome.failure();
					if (failure != null) {
						this.knownHeads.remove(persistenceId);
						throw new CompletionException(outcome.rowsMayExist()
								? uncertain(persistenceId, expected + 1, result.lastSequenceNr(), failure) : failure);
					}
					if (pastDeadline(started)) {
						// The head rode in the first batch: a reader may have sealed numbers of a later one.
						this.knownHeads.remove(persistenceId);
						throw new CompletionException(lateWrite(persistenceId, expected + 1, result.lastSequenceNr()));
					}
					if (this.knownHeads.size() > 100_000) {
						this.knownHeads.clear();
					}
					this.knownHeads.put(persistenceId, result.lastSequenceNr());
					return result;
				});
		});
	}

	/**
	 * Writes an append's rows. With the tag index on, the events rows and the tag rows go in one logged batch:
	 * Cassandra's batch log applies all of it or none, also when the coordinator dies after accepting it (the
	 * batch log is replayed). An append too large for one batch ({@link #ATOMIC_BATCH_MAX_BYTES}, or refused by
	 * the node as too large) writes its events first and its tag rows only once the events are acknowledged:
	 * tag rows never exist without their events, but an uncertain outcome may leave events without tag rows.
	 * In the bucketed tag layout the logged batch is sent only once the tag's bucket list row is written: if that
	 * write fails (even one that may have applied), the batch was never sent, so the outcome says no row of the
	 * range exists and the claim is released (a plain failure, retryable with the same expected number).
	 * Every row carries {@code writeTime} (the driver's write time stamp, in microseconds, taken before the claim;
	 * {@link Statement#NO_DEFAULT_TIMESTAMP} when the driver leaves time stamps to the server), on every attempt.
	 */
	private CompletionStage<RowWrites.Outcome> writeRows(String persistenceId, long expected, List<EventToAppend> events,
			List<String> payloads, long timestamp, long writeTime, @Nullable BoundStatement head, long started) {
		Map<Long, List<BatchableStatement<?>>> byPartition = new LinkedHashMap<>();
		List<TagPartitions.TagRow> tagRows = new ArrayList<>();
		for (int i = 0; i < events.size(); i++) {
			long sequenceNr = expected + 1 + i;
			long partition = (sequenceNr - 1) / this.options.partitionSize();
			Set<String> tags = events.get(i).tags();
			byPartition.computeIfAbsent(partition, (p) -> new ArrayList<>())
				.add(this.statements.insertEvent.bind(persistenceId, partition, sequenceNr, timestamp, payloads.get(i),
						tags));
			if (this.tagIndex != null) {
				for (String tag : tags) {
					tagRows.add(new TagPartitions.TagRow(tag, timestamp, persistenceId, sequenceNr, payloads.get(i), tags));
				}
			}
		}
		if (head != null) {
			byPartition.values().iterator().next().add(head);
		}
		TagPartitions tagIndex = this.tagIndex;
		if (tagIndex == null || tagRows.isEmpty()) {
			return eventWrites(persistenceId, expected, expected + events.size(), byPartition, writeTime, started)
				.run();
		}
		// The segment-aware index writes each tag row a second time (TagPartitions#copies).
		if (BatchBytes.events(payloads, events.stream().map(EventToAppend::tags).toList(), byPartition.size(),
				head != null)
				+ BatchBytes.tagRows(tagRows, tagIndex.copies(), expiringTagRows()) <= ATOMIC_BATCH_MAX_BYTES) {
			// The bucket list (bucketed layout) is its own step, before the batch: when it fails, the batch is never
			// sent and no row of the range exists, whatever the failure says of the list's own row.
			AtomicReference<List<BoundStatement>> tagInserts = new AtomicReference<>();
			RowWrites listing = new RowWrites();
			listing.add(false, () -> tagIndex.inserts(tagRows).thenAccept(tagInserts::set));
			return listing.run().thenCompose((listed) -> {
				if (listed.failure() != null) {
					return CompletableFuture.completedFuture(listed);
				}
				RowWrites atomic = new RowWrites();
				atomic.add(true, () -> {
					if (pastDeadline(started)) {
						// Not sent (nor retried) past the deadline: a reader may have sealed the numbers, and the
						// seal would shadow the events but not the tag rows (review 2 of finding 15, item 3).
						return CompletableFuture.failedFuture(lateWrite(persistenceId, expected + 1,
								expected + events.size()));
					}
					BatchStatementBuilder batch = BatchStatement.builder(BatchType.LOGGED);
					byPartition.values().forEach((rows) -> rows.forEach(batch::addStatement));
					tagInserts.get().forEach(batch::addStatement);
					return this.session.executeAsync(configure(batch, writeTime));
				});
				return atomic.run().thenCompose((outcome) -> {
					if (outcome.failure() != null && batchTooLarge(outcome.failure()) && !outcome.rowsMayExist()) {
						logger.warn("Append to '{}' ({}..{}) was refused as one logged batch ({}); writing its events, "
								+ "then its tag rows", persistenceId, expected + 1, expected + events.size(),
								outcome.failure().getMessage());
						return eventsThenTags(persistenceId, expected, expected + events.size(), byPartition, tagIndex,
								tagRows, writeTime, started);
					}
					return CompletableFuture.completedFuture(outcome);
				});
			});
		}
		return eventsThenTags(persistenceId, expected, expected + events.size(), byPartition, tagIndex, tagRows,
				writeTime, started);
	}

	/**
	 * The weaker path: the events (one unlogged batch per partition), and only once they are written, the tag rows
	 * (with the segment-aware index, the copies of each row in one logged batch: {@link TagCopyWrites}).
	 * Events written past the writer's deadline may be sealed by a reader: their tag rows are then not written
	 * (they would be rows without events; finding 15, item 7) and the outcome is
	 * {@link JournalWriteUncertainException#lateWrite}.
	 */
	private CompletionStage<RowWrites.Outcome> eventsThenTags(String persistenceId, long expected, long last,
			Map<Long, List<BatchableStatement<?>>> byPartition, TagPartitions tagIndex, List<TagPartitions.TagRow> tagRows,
			long writeTime, long started) {
		RowWrites events = eventWrites(persistenceId, expected, last, byPartition, writeTime, started);
		return events.run().thenCompose((written) -> {
			if (written.failure() != null) {
				return CompletableFuture.completedFuture(written);
			}
			if (pastDeadline(started)) {
				return CompletableFuture.completedFuture(
						new RowWrites.Outcome(lateWrite(persistenceId, expected + 1, last), true));
			}
			Map<String, List<TagPartitions.TagRow>> byTag = new LinkedHashMap<>();
			for (TagPartitions.TagRow row : tagRows) {
				byTag.computeIfAbsent(row.tag(), (t) -> new ArrayList<>()).add(row);
			}
			RowWrites tags = new RowWrites();
			for (List<TagPartitions.TagRow> rows : byTag.values()) {
				TagCopyWrites copies = this.tagCopies;
				if (copies != null) {
					// The copies of a row all or none, in logged batches (review S2 of the segment-aware index).
					copies.add(tags, rows, writeTime, (batch) -> configure(batch, writeTime));
				}
				else {
					// One write per tag (one batch): each has its own outcome.
					tags.add(true, () -> tagIndex.write(rows, writeTime));
				}
			}
			// The events are written: whatever the tag rows do, rows of the range exist.
			return tags.run().thenApply((outcome) -> new RowWrites.Outcome(outcome.failure(), true));
		});
	}

	/**
	 * The events batches (one per partition). None is sent, nor retried, past the writer's deadline: it fails with
	 * {@link JournalWriteUncertainException#lateWrite}, which counts as rows that may exist (an earlier attempt may
	 * have applied), so the claim is kept.
	 */
	private RowWrites eventWrites(String persistenceId, long expected, long last,
			Map<Long, List<BatchableStatement<?>>> byPartition, long writeTime, long started) {
		RowWrites writes = new RowWrites();
		for (List<BatchableStatement<?>> statements : byPartition.values()) {
			BatchStatementBuilder builder = BatchStatement.builder(BatchType.UNLOGGED);
			statements.forEach(builder::addStatement);
			BatchStatement batch = configure(builder, writeTime);
			writes.add(true, () -> pastDeadline(started)
					? CompletableFuture.failedFuture(lateWrite(persistenceId, expected + 1, last))
					: this.session.executeAsync(batch));
		}
		return writes;
	}

	private BatchStatement configure(BatchStatementBuilder builder, long writeTime) {
		return builder.setIdempotence(true)
			.setConsistencyLevel(this.options.consistency())
			.setTimeout(this.options.requestTimeout())
			.setQueryTimestamp(writeTime)
			.build();
	}

	private boolean expiringTagRows() {
		return !this.options.tagIndexTtl().isZero();
	}

	/** Cassandra's answer to a batch over {@code batch_size_fail_threshold}: "Batch too large". */
	static boolean batchTooLarge(Throwable failure) {
		Throwable cause = Errors.unwrap(failure);
		return cause instanceof InvalidQueryException && cause.getMessage() != null
				&& cause.getMessage().contains("Batch too large");
	}

	private static Set<String> allTags(List<EventToAppend> events) {
		Set<String> tags = new HashSet<>();
		for (EventToAppend event : events) {
			tags.addAll(event.tags());
		}
		return tags;
	}

}
