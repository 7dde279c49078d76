package io.cassandrajournal.journal;

import java.util.List;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.DriverException;
import com.datastax.oss.driver.api.core.NodeUnavailableException;
import com.datastax.oss.driver.api.core.RequestThrottlingException;
import com.datastax.oss.driver.api.core.connection.BusyConnectionException;
import com.datastax.oss.driver.api.core.servererrors.BootstrappingException;
import com.datastax.oss.driver.api.core.servererrors.CoordinatorException;
import com.datastax.oss.driver.api.core.servererrors.OverloadedException;
import com.datastax.oss.driver.api.core.servererrors.QueryValidationException;
import com.datastax.oss.driver.api.core.servererrors.UnavailableException;

import io.cassandrajournal.internal.Errors;

/**
 * Where the write path ({@link AppendWriter}) learns what a failed write means: whether it certainly did
 * not apply (so its claim may be released) and whether sending it again is worth it.
 */
final class WriteOutcome {

	private WriteOutcome() {
	}

	/**
	 * A write certainly did not apply when no replica can have received it: no node was available or every
	 * node tried refused it before executing (not enough replicas alive, bootstrapping), the driver throttled or
	 * found no free connection (or no connection at all: {@link NodeUnavailableException}, never sent), or Cassandra rejected the statement as invalid. A timeout (client- or
	 * server-side) or a connection lost while waiting is never certain, and neither is {@link OverloadedException}:
	 * Cassandra checks the hints in progress per replica while it sends (a replica may already have the rows)
	 * and, for a logged batch, after the batch log holds it (the batch log replays it later).
	 * @param error a write's failure, possibly wrapped in a completion exception
	 * @return whether the write certainly did not apply
	 */
	static boolean certainlyNotApplied(Throwable error) {
		Throwable cause = Errors.unwrap(error);
		if (cause instanceof AllNodesFailedException all) {
			// NoNodeAvailableException is one with no node tried.
			return all.getAllErrors().values().stream().flatMap(List::stream).allMatch(WriteOutcome::certainlyNotApplied);
		}
		return cause instanceof UnavailableException || cause instanceof BootstrappingException
				|| cause instanceof RequestThrottlingException
				|| cause instanceof BusyConnectionException || cause instanceof NodeUnavailableException
				|| cause instanceof QueryValidationException;
	}

	/**
	 * A Paxos round (a claim or its release) certainly did not apply only when it was refused before any
	 * proposal could be accepted: as {@link #certainlyNotApplied}, except that {@link UnavailableException}
	 * proves nothing here either (no more than {@link OverloadedException}), because Cassandra raises both in
	 * the commit phase too, after a quorum accepted the proposal ({@code StorageProxy.commitPaxos} checks the
	 * live replicas and the hints in progress again); the next Paxos round on the row then completes that
	 * proposal (docs/reliability.md, finding 6).
	 * @param error a lightweight transaction's failure, possibly wrapped in a completion exception
	 * @return whether the round certainly did not apply
	 */
	static boolean paxosRoundCertainlyNotApplied(Throwable error) {
		Throwable cause = Errors.unwrap(error);
		if (cause instanceof AllNodesFailedException all) {
			return all.getAllErrors()
				.values()
				.stream()
				.flatMap(List::stream)
				.allMatch(WriteOutcome::paxosRoundCertainlyNotApplied);
		}
		return !(cause instanceof UnavailableException || cause instanceof OverloadedException)
				&& certainlyNotApplied(cause);
	}

	/**
	 * Whether a failure is the coordinator's own answer ({@link CoordinatorException}: a server-side timeout,
	 * unavailable, overloaded, ...), sent once it stopped working on the request, rather than one the driver made
	 * without an answer (a lost connection, a client-side timeout, a frame it could not decode), after which the
	 * coordinator may still be running it (docs/reliability.md, finding 20).
	 * @param error a request's failure, possibly wrapped in a completion exception
	 * @return whether every node tried answered with an error
	 */
	static boolean answeredByCoordinator(Throwable error) {
		Throwable cause = Errors.unwrap(error);
		if (cause instanceof AllNodesFailedException all) {
			List<Throwable> errors = all.getAllErrors().values().stream().flatMap(List::stream).toList();
			return !errors.isEmpty() && errors.stream().allMatch(WriteOutcome::answeredByCoordinator);
		}
		return cause instanceof CoordinatorException;
	}

	/**
	 * Whether the driver may have sent a request more than once before this failure (docs/reliability.md,
	 * finding 20): even a non-idempotent statement is retried after an unavailable (to the next node) or a read
	 * timeout (a CAS in Paxos v1's read phase; to the same node), so the last attempt may have been sent well after
	 * the first. The earlier attempts' errors are in the failure's execution info; an
	 * {@link AllNodesFailedException} is the end of a query plan the driver walked.
	 * @param error a request's failure, possibly wrapped in a completion exception
	 * @return whether an attempt other than the first may have been sent
	 */
	static boolean mayHaveBeenResent(Throwable error) {
		Throwable cause = Errors.unwrap(error);
		if (cause instanceof AllNodesFailedException) {
			return true;
		}
		return cause instanceof DriverException driver && driver.getExecutionInfo() != null
				&& !driver.getExecutionInfo().getErrors().isEmpty();
	}

	/**
	 * @param error a write's failure, possibly wrapped
	 * @return whether sending the same idempotent write again may succeed: driver and server failures,
	 * not a statement Cassandra rejected as invalid
	 */
	static boolean retryable(Throwable error) {
		Throwable cause = Errors.unwrap(error);
		return cause instanceof DriverException && !(cause instanceof QueryValidationException);
	}

}
