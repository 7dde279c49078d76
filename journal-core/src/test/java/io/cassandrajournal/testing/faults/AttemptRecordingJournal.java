package io.cassandrajournal.testing.faults;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.AppendListener;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.ConsistencyReport;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.JournalConcurrencyException;
import io.cassandrajournal.journal.JournalWriteUncertainException;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.journal.ReplayResult;

/**
 * A journal that remembers every append attempt that failed in a way that may have left its claim without
 * events: lost with a head exactly at its own claim (a claim that timed out, applied, and was reported as a
 * conflict, since the journal cannot tell it from another writer's), failed with a range the journal reports as
 * uncertain, or failed because of a timeout or a connection lost with the request in flight. An entity
 * repository retries conflicts inside one command, so its client never hears of such an attempt; the numbers stay
 * a gap, and the checker needs to know who may have claimed them.
 */
final class AttemptRecordingJournal implements Journal {

	/** A range of sequence numbers a lost attempt may have claimed. */
	record LostClaim(String persistenceId, long from, long to) {
	}

	private final Journal delegate;

	private final List<LostClaim> lostClaims = new ArrayList<>();

	private @Nullable CrashLog log;

	AttemptRecordingJournal(Journal delegate) {
		this.delegate = delegate;
	}

	/**
	 * Also writes every attempt (before it is sent and when it ends) and every lost claim to a log that survives
	 * a SIGKILL of this JVM: an attempt without an end was in flight at the kill and may hold its claim.
	 * @param crashLog the log
	 * @return this
	 */
	AttemptRecordingJournal withLog(CrashLog crashLog) {
		this.log = crashLog;
		return this;
	}

	synchronized List<LostClaim> lostClaims() {
		return List.copyOf(this.lostClaims);
	}

	@Override
	public CompletionStage<AppendResult> append(String persistenceId, long expectedSequenceNr,
			List<EventToAppend> events) {
		CrashLog crashLog = this.log;
		long attempt = (crashLog != null)
				? crashLog.attempt(persistenceId, expectedSequenceNr + 1, expectedSequenceNr + events.size()) : -1;
		return this.delegate.append(persistenceId, expectedSequenceNr, events).whenComplete((ok, error) -> {
			if (error != null && mayHaveClaimed(Errors.unwrap(error), expectedSequenceNr + events.size())) {
				LostClaim lost = new LostClaim(persistenceId, expectedSequenceNr + 1, expectedSequenceNr + events.size());
				synchronized (this) {
					this.lostClaims.add(lost);
				}
				if (crashLog != null) {
					crashLog.lostClaim(lost);
				}
			}
			if (crashLog != null) {
				crashLog.attemptEnded(attempt);
			}
		});
	}

	/**
	 * @return whether a failed append may hold its claim without events: a conflict whose head is exactly its own
	 * claim, a {@link JournalWriteUncertainException}, or a failure caused by a timeout or a lost connection (a
	 * claim whose Paxos round timed out and could not be resolved)
	 */
	static boolean mayHaveClaimed(Throwable cause, long claimEnd) {
		if (cause instanceof JournalConcurrencyException conflict) {
			return conflict.actualSequenceNr() == claimEnd;
		}
		if (cause instanceof JournalWriteUncertainException) {
			return true;
		}
		return FaultRun.mayHaveApplied(cause);
	}

	@Override
	public <E> CompletionStage<Long> replay(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Class<E> payloadType, Consumer<? super PersistentEvent<E>> consumer) {
		return this.delegate.replay(persistenceId, fromSequenceNr, toSequenceNr, payloadType, consumer);
	}

	@Override
	public CompletionStage<Long> replayRaw(String persistenceId, long fromSequenceNr, long toSequenceNr,
			Consumer<? super PersistentEvent<String>> consumer) {
		return this.delegate.replayRaw(persistenceId, fromSequenceNr, toSequenceNr, consumer);
	}

	@Override
	public <E> CompletionStage<ReplayResult> replayContiguous(String persistenceId, long fromSequenceNr,
			long toSequenceNr, Class<E> payloadType, Consumer<? super PersistentEvent<E>> consumer) {
		return this.delegate.replayContiguous(persistenceId, fromSequenceNr, toSequenceNr, payloadType, consumer);
	}

	@Override
	public CompletionStage<ReplayResult> replayContiguousRaw(String persistenceId, long fromSequenceNr,
			long toSequenceNr, Consumer<? super PersistentEvent<String>> consumer) {
		return this.delegate.replayContiguousRaw(persistenceId, fromSequenceNr, toSequenceNr, consumer);
	}

	@Override
	public CompletionStage<ReplayResult> replayContiguousRawHoldingEnd(String persistenceId, long fromSequenceNr,
			long toSequenceNr, Consumer<? super PersistentEvent<String>> consumer) {
		return this.delegate.replayContiguousRawHoldingEnd(persistenceId, fromSequenceNr, toSequenceNr, consumer);
	}

	@Override
	public CompletionStage<Long> highestSequenceNr(String persistenceId) {
		return this.delegate.highestSequenceNr(persistenceId);
	}

	@Override
	public CompletionStage<Void> deleteTo(String persistenceId, long toSequenceNr) {
		return this.delegate.deleteTo(persistenceId, toSequenceNr);
	}

	@Override
	public CompletionStage<ConsistencyReport> checkConsistency(String persistenceId) {
		return this.delegate.checkConsistency(persistenceId);
	}

	@Override
	public CompletionStage<List<String>> persistenceIds(@Nullable String afterId, int limit) {
		return this.delegate.persistenceIds(afterId, limit);
	}

	@Override
	public void addAppendListener(AppendListener listener) {
		this.delegate.addAppendListener(listener);
	}

	@Override
	public void removeAppendListener(AppendListener listener) {
		this.delegate.removeAppendListener(listener);
	}

}
