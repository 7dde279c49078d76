package io.cassandrajournal.testing.faults;

import java.time.Clock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.journal.ConsistencyReport;
import io.cassandrajournal.testing.faults.HistoryChecker.Rule;
import io.cassandrajournal.testing.faults.History.OpKind;
import io.cassandrajournal.testing.faults.History.Outcome;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The checker's rules on hand-made histories, without Cassandra: a clean history breaks none, and each bad one
 * breaks the rule it should (so every rule can fail).
 */
class HistoryCheckerTest {

	private final History history = new History();

	private final int hot = this.history.entity("hot-0");

	private final int account = this.history.entity("account-0");

	private final Map<Long, HistoryChecker.Stored> hotRows = new HashMap<>();

	private final Map<Long, HistoryChecker.Stored> bankRows = new HashMap<>();

	private final Deliveries byId = new Deliveries("by-id", Deliveries.Promise.PER_ENTITY_ORDER, (d) -> true, 0);

	private final Deliveries lanes = new Deliveries("lanes", Deliveries.Promise.ONE_AT_A_TIME_PER_ENTITY, (d) -> true, 0);

	private final Deliveries deposits = new Deliveries("deposits", Deliveries.Promise.NONE, (d) -> d > 0, 0);

	// op 0: append 1..2 on hot-0; op 1: deposit 10 at 1; op 2: withdraw 4 at 2; op 3: deleteTo(1) on hot-0.
	private final int append = op(OpKind.APPEND, this.hot, 0, 2, 0, Outcome.OK, 1, 2);

	private final int deposit = op(OpKind.DEPOSIT, this.account, 0, 1, 10, Outcome.OK, 1, 1);

	private final int withdraw = op(OpKind.WITHDRAW, this.account, 0, 1, 4, Outcome.OK, 2, 2);

	private int op(OpKind kind, int entity, long expected, int events, long value, Outcome outcome, long first,
			long last) {
		int op = this.history.invoke(kind, 0, entity, expected, events, value);
		this.history.complete(op, outcome, first, last);
		return op;
	}

	/** The tables of the clean history: hot-0 deleted to 1 (its event 2 stays), the account at 1 and 2. */
	private HistoryChecker tables(long deletedReplayFirst) {
		return tables(deletedReplayFirst, true);
	}

	private HistoryChecker tables(long deletedReplayFirst, boolean hotEventStays) {
		op(OpKind.DELETE_TO, this.hot, 1, 0, 0, Outcome.OK, deletedReplayFirst, deletedReplayFirst);
		HistoryChecker checker = new HistoryChecker(this.history);
		if (hotEventStays) {
			checker.addEvent(this.hot, 2, new FaultEvent(this.append, 1, 0));
			checker.addTagRow("hot", this.hot, 2, new FaultEvent(this.append, 1, 0), this.hotRows);
		}
		checker.addEvent(this.account, 1, new FaultEvent(this.deposit, 0, 10));
		checker.addEvent(this.account, 2, new FaultEvent(this.withdraw, 0, -4));
		checker.addTagRow("bank", this.account, 1, new FaultEvent(this.deposit, 0, 10), this.bankRows);
		checker.addTagRow("bank", this.account, 2, new FaultEvent(this.withdraw, 0, -4), this.bankRows);
		checker.addConsistency(new ConsistencyReport("hot-0", 2, 2, 1, List.of()));
		checker.addConsistency(new ConsistencyReport("account-0", 2, 2, 2, List.of()));
		checker.addSnapshot(this.account, 2, 6);
		return checker;
	}

	private void deliverEverything() {
		for (Deliveries projection : List.of(this.byId, this.lanes)) {
			projection.deliver("account-0", 1, 10);
			projection.deliver("account-0", 2, -4);
		}
		this.deposits.deliver("account-0", 1, 10);
	}

	private HistoryChecker.Result check(HistoryChecker checker) {
		return checker.checkLoaded(List.of(this.account), List.of(this.byId, this.lanes, this.deposits), List.of());
	}

	@Test
	void aCleanHistoryBreaksNoRule() {
		HistoryChecker checker = tables(0);
		deliverEverything();
		// A redelivery after a failed offset save goes back: allowed.
		this.byId.deliver("account-0", 1, 10);
		this.byId.deliver("account-0", 2, -4);

		HistoryChecker.Result result = check(checker);

		assertThat(result.total()).as(result.first().toString()).isZero();
	}

	@Test
	void anEventThatSurvivedAnAcknowledgedDeleteToBreaksDeletedGone() {
		HistoryChecker checker = tables(0);
		checker.addEvent(this.hot, 1, new FaultEvent(this.append, 0, 0));
		deliverEverything();

		assertThat(check(checker).violations()).containsEntry(Rule.DELETED_GONE, 1L);
	}

	@Test
	void aTagRowLeftBelowADeleteToByABatchSentLateIsTheResidualWindowNotAViolation() {
		HistoryChecker checker = tables(0);
		checker.addTagRow("hot", this.hot, 1, 1_000, new FaultEvent(this.append, 0, 0), this.hotRows);
		LateWrites late = new LateWrites(Duration.ofSeconds(3), Clock.systemUTC());
		late.add("hot-0", 1, 1_000);
		checker.excusingLateWrites(late);
		deliverEverything();

		HistoryChecker.Result result = check(checker);

		assertThat(result.total()).as(result.first().toString()).isZero();
		assertThat(result.tagRowsLeftByLateBatches()).isOne();
	}

	@Test
	void aTagRowLeftBelowADeleteToBreaksDeletedGoneUnlessItsOwnRowWasSentLate() {
		// Late rows are matched on entity, number and time stamp: another attempt's late row excuses nothing.
		HistoryChecker checker = tables(0);
		checker.addTagRow("hot", this.hot, 1, 1_000, new FaultEvent(this.append, 0, 0), this.hotRows);
		LateWrites late = new LateWrites(Duration.ofSeconds(3), Clock.systemUTC());
		late.add("hot-0", 1, 999);
		late.add("account-0", 1, 1_000);
		checker.excusingLateWrites(late);
		deliverEverything();

		HistoryChecker.Result result = check(checker);

		assertThat(result.violations()).containsEntry(Rule.DELETED_GONE, 1L);
		assertThat(result.tagRowsLeftByLateBatches()).isZero();
	}

	@Test
	void anEventLeftInEventsBelowADeleteToBreaksDeletedGoneEvenIfItsBatchWasLate() {
		// The append's write time is older than the delete: a late batch is shadowed in events, always.
		HistoryChecker checker = tables(0);
		checker.addEvent(this.hot, 1, new FaultEvent(this.append, 0, 0));
		checker.addTagRow("hot", this.hot, 1, 1_000, new FaultEvent(this.append, 0, 0), this.hotRows);
		LateWrites late = new LateWrites(Duration.ofSeconds(3), Clock.systemUTC());
		late.add("hot-0", 1, 1_000);
		checker.excusingLateWrites(late);
		deliverEverything();

		assertThat(check(checker).violations()).containsEntry(Rule.DELETED_GONE, 2L);
	}

	@Test
	void aReplayReturningADeletedEventBreaksDeletedGone() {
		HistoryChecker checker = tables(1);
		deliverEverything();

		assertThat(check(checker).violations()).containsEntry(Rule.DELETED_GONE, 1L);
	}

	@Test
	void anAcknowledgedEventAboveTheDeletedRangeMustStay() {
		// Event 2 of the append is gone too (from events and the tag index): deleteTo(1) took more than it was asked.
		HistoryChecker checker = tables(0, false);
		deliverEverything();

		assertThat(check(checker).violations()).containsEntry(Rule.ACKED_PRESENT, 2L);
	}

	@Test
	void aProjectionByPersistenceIdDeliveringALaterEventFirstBreaksDeliveryOrder() {
		HistoryChecker checker = tables(0);
		deliverEverything();
		Deliveries outOfOrder = new Deliveries("by-id", Deliveries.Promise.PER_ENTITY_ORDER, (d) -> true, 0);
		outOfOrder.deliver("account-0", 2, -4);
		outOfOrder.deliver("account-0", 1, 10);

		HistoryChecker.Result result = checker.checkLoaded(List.of(this.account), List.of(outOfOrder), List.of());

		assertThat(result.violations()).containsEntry(Rule.DELIVERY_ORDER, 1L);
	}

	@Test
	void anEventOfAnUnknownOutcomeDeliveredAfterALaterOneIsLateNotOutOfOrder() {
		// Finding 11: 2's append was cut off, its number stepped over as a crash gap, and its event appeared later
		// (the batch log): the projection by persistenceId delivers it late, after 3.
		History late = new History();
		int entity = late.entity("account-0");
		int first = late.invoke(OpKind.DEPOSIT, 0, entity, 0, 1, 10);
		late.complete(first, Outcome.OK, 1, 1);
		int cutOff = late.invoke(OpKind.DEPOSIT, 0, entity, 1, 1, 5);
		late.complete(cutOff, Outcome.UNKNOWN, 2, 2);
		int third = late.invoke(OpKind.DEPOSIT, 1, entity, 2, 1, 7);
		late.complete(third, Outcome.OK, 3, 3);
		HistoryChecker checker = new HistoryChecker(late);
		Map<Long, HistoryChecker.Stored> rows = new HashMap<>();
		long[] deltas = { 10, 5, 7 };
		int[] ops = { first, cutOff, third };
		for (int i = 0; i < 3; i++) {
			checker.addEvent(entity, i + 1, new FaultEvent(ops[i], 0, deltas[i]));
			checker.addTagRow("bank", entity, i + 1, new FaultEvent(ops[i], 0, deltas[i]), rows);
		}
		checker.addConsistency(new ConsistencyReport("account-0", 3, 3, 3, List.of()));
		Deliveries byIdLate = new Deliveries("by-id", Deliveries.Promise.PER_ENTITY_ORDER, (d) -> true, 0);
		byIdLate.deliver("account-0", 1, 10);
		byIdLate.deliver("account-0", 3, 7);
		byIdLate.deliver("account-0", 2, 5);

		HistoryChecker.Result result = checker.checkLoaded(List.of(entity), List.of(byIdLate), List.of());

		assertThat(result.total()).as(result.first().toString()).isZero();
	}

	@Test
	void twoEventsOfOneEntityInTheHandlerAtOnceBreakDeliveryOrderForLanes() {
		HistoryChecker checker = tables(0);
		deliverEverything();
		this.lanes.enter("account-0", 1);
		this.lanes.enter("account-0", 2);
		this.lanes.exit("account-0");
		this.lanes.exit("account-0");

		assertThat(check(checker).violations()).containsEntry(Rule.DELIVERY_ORDER, 1L);
	}

	@Test
	void aFilteredProjectionMustHoldWhatItsFilterSelectsAndNothingElse() {
		HistoryChecker checker = tables(0);
		for (Deliveries projection : List.of(this.byId, this.lanes)) {
			projection.deliver("account-0", 1, 10);
			projection.deliver("account-0", 2, -4);
		}
		// The deposit never arrived; the withdrawal, which not(withdrawal) excludes, did.
		this.deposits.deliver("account-0", 2, -4);

		assertThat(check(checker).violations()).containsEntry(Rule.PROJECTION, 2L);
	}

	@Test
	void aSnapshotThatIsNotTheFoldOfTheJournalBreaksSnapshotFold() {
		HistoryChecker checker = tables(0);
		checker.addSnapshot(this.account, 1, 9);
		deliverEverything();

		assertThat(check(checker).violations()).containsEntry(Rule.SNAPSHOT_FOLD, 1L);
	}

	@Test
	void anUnknownAppendWithoutItsTagRowIsCountedAsASplitNotAsMissedByTagProjections() {
		int unknown = op(OpKind.DEPOSIT, this.account, 0, 1, 5, Outcome.UNKNOWN, 3, 3);
		HistoryChecker checker = tables(0);
		checker.addEvent(this.account, 3, new FaultEvent(unknown, 0, 5));
		deliverEverything();
		this.byId.deliver("account-0", 3, 5);

		HistoryChecker.Result result = check(checker);

		assertThat(result.violations()).containsEntry(Rule.UNKNOWN_TAG_INDEX_SPLIT, 1L).containsEntry(Rule.PROJECTION, 0L);
		// The projection by persistenceId reads events: it must still have it.
		HistoryChecker again = new HistoryChecker(this.history);
		again.addEvent(this.account, 3, new FaultEvent(unknown, 0, 5));
		Deliveries byIdWithout = new Deliveries("by-id", Deliveries.Promise.PER_ENTITY_ORDER, (d) -> true, 0);
		assertThat(again.checkLoaded(List.of(this.account), List.of(byIdWithout), List.of()).violations())
			.containsEntry(Rule.PROJECTION, 1L);
	}

}
