package io.cassandrajournal.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.cql.BatchStatement;

import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.JournalWriteUncertainException;
import io.cassandrajournal.journal.ReplayResult;
import io.cassandrajournal.testing.AccountEvent.Deposited;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The scenarios shared by the tests of the seal (LateBatchSealIT, LateTagRowsIT, DeleteToIT; docs/reliability.md,
 * findings 13, 15 and 21): one-event appends, contiguous replays that keep what they saw, the outcome of an append
 * held in flight, an append that dies after its claim, one whose release is accepted without commit, and the scenario
 * of a batch that lands late: 1 appended by writer B, writer A's batch of 2 held, 3 appended by B once A's claim of 2
 * shows. The per-class set-up is {@link JournalFixture}.
 */
public final class LateBatches {

	private LateBatches() {
	}

	/** A contiguous replay's sequence numbers and result. */
	public record Replayed(List<Long> sequenceNrs, ReplayResult result) {
	}

	/** The late append of {@link #heldBetween} and the append of 3 that followed its claim. */
	public record LateAppend(CompletionStage<AppendResult> late, AppendResult third) {
	}

	/** @return one deposit of {@code amount} with one tag */
	public static List<EventToAppend> deposit(int amount, String tag) {
		return List.of(EventToAppend.of(new Deposited(amount), tag));
	}

	/** @return a contiguous replay of the whole entity, keeping the sequence numbers it delivered */
	public static CompletionStage<Replayed> replay(Journal journal, String id) {
		List<Long> seen = new ArrayList<>();
		return journal.replayContiguous(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> seen.add(e.sequenceNr()))
			.thenApply((result) -> new Replayed(List.copyOf(seen), result));
	}

	/** @return {@link #replay}, waited for (10 s: a replay may wait in-flight-wait for a hole, then seal it) */
	public static Replayed replayed(Journal journal, String id) {
		return result(replay(journal, id), Duration.ofSeconds(10));
	}

	/**
	 * Waits for an append held in flight to finish, whatever its outcome (20 s: held batches and the writer's
	 * retries on a loaded machine).
	 * @return its failure, unwrapped from the stage's {@link CompletionException}; null on success
	 */
	public static Throwable outcome(CompletionStage<AppendResult> append) {
		CompletableFuture<Throwable> failure = append
			.handle((ok, error) -> (error instanceof CompletionException && error.getCause() != null) ? error.getCause()
					: error)
			.toCompletableFuture();
		return result(failure, Duration.ofSeconds(20));
	}

	/**
	 * The append of {@code expected + 1..} claims its numbers and dies before writing anything else: its batches,
	 * deletes and release fail ({@link FaultInjectingSession#failEverythingButTheClaim}), as in a crash between claim
	 * and batch. The numbers stay claimed without events (a crash gap).
	 * @param journal a journal on {@code faults}' session
	 * @param faults its fault session, healed on return
	 * @param id the entity, whose head is {@code expected}
	 * @param events what the append would have written
	 */
	public static void appendDyingAfterItsClaim(Journal journal, FaultInjectingSession faults, String id, long expected,
			List<EventToAppend> events) {
		faults.failEverythingButTheClaim();
		assertThatExceptionOfType(JournalUnavailableException.class)
			.isThrownBy(() -> result(journal.append(id, expected, events)));
		faults.heal();
	}

	/**
	 * The append of {@code expected + 1..} claims its numbers, its batches fail before sending, and its claim's
	 * release (sent in time) is accepted by a quorum while its commit times out
	 * ({@link FaultInjectingSession#acceptWithoutCommit}): the writer reports the claim kept, a plain read shows it,
	 * and the next Paxos round on the row will complete the release (docs/reliability.md, finding 21 item 1). The
	 * journal must release claims: an in-flight wait well above its request timeout.
	 * @param journal a journal on {@code faults}' session
	 * @param faults its fault session, healed on return but for the accepted release
	 * @param id the entity, whose head is {@code expected}
	 * @param events what the append writes
	 */
	public static void appendWithAnUncommittedRelease(Journal journal, FaultInjectingSession faults, String id,
			long expected, List<EventToAppend> events) {
		faults.failBeforeSending((s) -> s instanceof BatchStatement, Integer.MAX_VALUE);
		faults.acceptWithoutCommit(FaultInjectingSession.claimReleases());
		assertThatExceptionOfType(JournalWriteUncertainException.class)
			.isThrownBy(() -> result(journal.append(id, expected, events)))
			.withMessageContaining((expected + 1) + "..");
		faults.heal();
		assertThat(faults.proposalPending()).as("the release accepted, not committed").isTrue();
		assertThat(result(journal.highestSequenceNr(id))).as("a plain read still shows the claim")
			.isEqualTo(expected + events.size());
	}

	/**
	 * Writer B appends 1; writer A's batches are held for {@code hold} and A appends 2 (its claim is not held);
	 * once the head shows A's claim B appends 3. Returns at once: A's append is still in flight.
	 * @param a writer A, on {@code slowA}'s session
	 * @param slowA the fault session under A
	 * @param b writer B
	 * @param id a new entity
	 * @param hold how long A's batch is held before it is sent
	 * @param tag the tag of the three events
	 * @return A's append, in flight, and B's append of 3
	 */
	public static LateAppend heldBetween(Journal a, FaultInjectingSession slowA, Journal b, String id, Duration hold,
			String tag) {
		result(b.append(id, 0, deposit(1, tag)));
		slowA.delayBatches(hold);
		CompletionStage<AppendResult> late = a.append(id, 1, deposit(2, tag));
		// Bound: A's claim is one Paxos round, not delayed; 10 s is ample on a loaded machine.
		await().alias("A's claim of 2").atMost(Duration.ofSeconds(10)).until(() -> result(b.highestSequenceNr(id)) == 2);
		return new LateAppend(late, result(b.append(id, 2, deposit(3, tag))));
	}

}
