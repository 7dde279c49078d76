package io.cassandrajournal.journal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.AccountEvent.Opened;
import io.cassandrajournal.testing.AccountEvent.Withdrawn;
import io.cassandrajournal.testing.Unserializable;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The {@link Journal} contract; every implementation's test extends it.
 */
public abstract class JournalContract {

	protected abstract Journal journal();

	protected static String newId() {
		return "account-" + UUID.randomUUID();
	}

	protected static List<PersistentEvent<AccountEvent>> replayAll(Journal journal, String persistenceId) {
		List<PersistentEvent<AccountEvent>> events = new ArrayList<>();
		result(journal.replay(persistenceId, 1, Long.MAX_VALUE, AccountEvent.class, events::add));
		return events;
	}

	@Test
	void appendsAndReplaysInOrderWithTags() {
		String id = newId();
		AppendResult first = result(journal().append(id, 0,
				List.of(EventToAppend.of(new Opened(), "account"), EventToAppend.of(new Deposited(25), "account", "big"))));
		assertThat(first.firstSequenceNr()).isEqualTo(1);
		assertThat(first.lastSequenceNr()).isEqualTo(2);
		assertThat(first.tags()).containsExactlyInAnyOrder("account", "big");
		AppendResult second = result(journal().append(id, 2, List.of(EventToAppend.of(new Withdrawn(10)))));
		assertThat(second.firstSequenceNr()).isEqualTo(3);

		List<PersistentEvent<AccountEvent>> events = replayAll(journal(), id);
		assertThat(events).extracting(PersistentEvent::sequenceNr).containsExactly(1L, 2L, 3L);
		assertThat(events).extracting(PersistentEvent::payload)
			.containsExactly(new Opened(), new Deposited(25), new Withdrawn(10));
		assertThat(events.get(1).tags()).containsExactlyInAnyOrder("account", "big");
		assertThat(events.get(2).tags()).isEmpty();
		assertThat(events.get(0).persistenceId()).isEqualTo(id);
		assertThat(result(journal().highestSequenceNr(id))).isEqualTo(3);
	}

	@Test
	void replaysARange() {
		String id = newId();
		List<EventToAppend> ten = new ArrayList<>();
		for (int i = 1; i <= 10; i++) {
			ten.add(EventToAppend.of(new Deposited(i)));
		}
		result(journal().append(id, 0, ten));
		List<Long> seen = new ArrayList<>();
		long last = result(journal().replay(id, 4, 7, AccountEvent.class, (e) -> seen.add(e.sequenceNr())));
		assertThat(seen).containsExactly(4L, 5L, 6L, 7L);
		assertThat(last).isEqualTo(7);
		assertThat(result(journal().replay(id, 11, Long.MAX_VALUE, AccountEvent.class, (e) -> seen.add(-1L)))).isZero();
	}

	@Test
	void unknownEntityHasNoEventsAndHeadZero() {
		String id = newId();
		assertThat(replayAll(journal(), id)).isEmpty();
		assertThat(result(journal().highestSequenceNr(id))).isZero();
	}

	@Test
	void rejectsAnAppendWithAStaleExpectedSequenceNrAndWritesNothing() {
		String id = newId();
		result(journal().append(id, 0, List.of(EventToAppend.of(new Opened()))));
		result(journal().append(id, 1, List.of(EventToAppend.of(new Deposited(1)))));

		assertThatExceptionOfType(JournalConcurrencyException.class)
			.isThrownBy(() -> result(journal().append(id, 1, List.of(EventToAppend.of(new Deposited(99))))))
			.satisfies((ex) -> {
				assertThat(ex.persistenceId()).isEqualTo(id);
				assertThat(ex.expectedSequenceNr()).isEqualTo(1);
				assertThat(ex.actualSequenceNr()).isEqualTo(2);
			});
		assertThatExceptionOfType(JournalConcurrencyException.class)
			.isThrownBy(() -> result(journal().append(id, 0, List.of(EventToAppend.of(new Opened())))))
			.satisfies((ex) -> assertThat(ex.actualSequenceNr()).isEqualTo(2));
		assertThatExceptionOfType(JournalConcurrencyException.class)
			.isThrownBy(() -> result(journal().append(newId(), 5, List.of(EventToAppend.of(new Opened())))))
			.satisfies((ex) -> assertThat(ex.actualSequenceNr()).isZero());
		assertThat(replayAll(journal(), id)).extracting(PersistentEvent::payload)
			.containsExactly(new Opened(), new Deposited(1));
	}

	@Test
	void badInputFailsFastAndWritesNothing() {
		String id = newId();
		List<EventToAppend> one = List.of(EventToAppend.of(new Opened()));
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> result(journal().append(id, 0, List.of())))
			.withMessageContaining("events must not be empty");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> result(journal().append(id, -1, one)))
			.withMessageContaining("expectedSequenceNr");
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> result(journal().append("  ", 0, one)))
			.withMessageContaining("persistenceId must not be blank");
		assertThatExceptionOfType(JournalSerializationException.class)
			.isThrownBy(() -> result(journal().append(id, 0,
					List.of(EventToAppend.of(new Opened()), EventToAppend.of(new Unserializable())))))
			.withMessageContaining(Unserializable.class.getName());
		assertThatExceptionOfType(IllegalArgumentException.class)
			.isThrownBy(() -> result(journal().replay(id, 0, 5, AccountEvent.class, (e) -> {
			})))
			.withMessageContaining("fromSequenceNr");
		assertThat(result(journal().highestSequenceNr(id))).isZero();
		assertThat(replayAll(journal(), id)).isEmpty();
	}

	@Test
	void deleteToRemovesEventsButKeepsTheHead() {
		String id = newId();
		List<EventToAppend> five = new ArrayList<>();
		for (int i = 1; i <= 5; i++) {
			five.add(EventToAppend.of(new Deposited(i)));
		}
		result(journal().append(id, 0, five));
		result(journal().deleteTo(id, 3));
		assertThat(replayAll(journal(), id)).extracting(PersistentEvent::sequenceNr).containsExactly(4L, 5L);
		assertThat(result(journal().highestSequenceNr(id))).isEqualTo(5);
		result(journal().append(id, 5, List.of(EventToAppend.of(new Withdrawn(1)))));
		assertThat(replayAll(journal(), id)).extracting(PersistentEvent::sequenceNr).containsExactly(4L, 5L, 6L);
	}

	@Test
	void aContiguousReplayFromBelowTheDeletionMarkReportsTheDeletedRangeAndSkipsIt() {
		String id = newId();
		List<EventToAppend> eight = new ArrayList<>();
		for (int i = 1; i <= 8; i++) {
			eight.add(EventToAppend.of(new Deposited(i)));
		}
		result(journal().append(id, 0, eight));
		result(journal().deleteTo(id, 5));
		List<Long> seen = new ArrayList<>();
		ReplayResult all = result(journal().replayContiguous(id, 2, Long.MAX_VALUE, AccountEvent.class,
				(event) -> seen.add(event.sequenceNr())), java.time.Duration.ofSeconds(10));
		assertThat(seen).containsExactly(6L, 7L, 8L);
		assertThat(all.deleted()).isEqualTo(new ConsistencyReport.SequenceRange(2, 5));
		assertThat(all.crashGaps()).isEmpty();
		assertThat(all.coveredTo()).isEqualTo(8);
		// A replay that ends inside the deleted range reports all of it and covers only its own range.
		ReplayResult part = result(journal().replayContiguous(id, 1, 3, AccountEvent.class, (event) -> seen.add(0L)),
				java.time.Duration.ofSeconds(10));
		assertThat(part.deleted()).isEqualTo(new ConsistencyReport.SequenceRange(1, 5));
		assertThat(part.coveredTo()).isEqualTo(3);
		ReplayResult above = result(journal().replayContiguous(id, 6, Long.MAX_VALUE, AccountEvent.class,
				(event) -> { }), java.time.Duration.ofSeconds(10));
		assertThat(above.deleted()).isNull();
		assertThat(seen).containsExactly(6L, 7L, 8L);
	}

	@Test
	void consistencyCheckOfAHealthyEntityReportsNoGap() {
		String id = newId();
		result(journal().append(id, 0, List.of(EventToAppend.of(new Opened()), EventToAppend.of(new Deposited(3)))));
		ConsistencyReport report = result(journal().checkConsistency(id));
		assertThat(report.hasGap()).isFalse();
		assertThat(report.head()).isEqualTo(2);
		assertThat(report.highestStored()).isEqualTo(2);
		assertThat(report.storedEvents()).isEqualTo(2);
	}

	@Test
	void listsPersistenceIdsPageByPageInOrder() {
		String prefix = "list-" + UUID.randomUUID() + "-";
		List<String> mine = List.of(prefix + "a", prefix + "b", prefix + "c", prefix + "d", prefix + "e");
		for (String id : mine) {
			result(journal().append(id, 0, List.of(EventToAppend.of(new Opened()))));
		}
		List<String> seen = new ArrayList<>();
		String after = null;
		int pages = 0;
		while (true) {
			List<String> page = result(journal().persistenceIds(after, 2));
			assertThat(page.size()).isLessThanOrEqualTo(2);
			pages++;
			page.stream().filter((id) -> id.startsWith(prefix)).forEach(seen::add);
			if (page.size() < 2) {
				break;
			}
			after = page.get(page.size() - 1);
		}
		assertThat(seen).containsExactlyElementsOf(mine);
		assertThat(pages).isGreaterThanOrEqualTo(3);
	}

	@Test
	void tellsAppendListenersAfterTheAppend() {
		List<AppendResult> seen = new CopyOnWriteArrayList<>();
		AppendListener listener = seen::add;
		journal().addAppendListener(listener);
		try {
			String id = newId();
			result(journal().append(id, 0, List.of(EventToAppend.of(new Opened(), "account"))));
			assertThat(seen).anySatisfy((r) -> {
				assertThat(r.persistenceId()).isEqualTo(id);
				assertThat(r.tags()).isEqualTo(Set.of("account"));
			});
		}
		finally {
			journal().removeAppendListener(listener);
		}
	}

	@Test
	void readsPayloadsAsGenericJsonToo() {
		String id = newId();
		result(journal().append(id, 0, List.of(EventToAppend.of(new Deposited(5)))));
		List<Object> payloads = new ArrayList<>();
		result(journal().replay(id, 1, Long.MAX_VALUE, Object.class, (e) -> payloads.add(e.payload())));
		assertThat(payloads).singleElement().isEqualTo(java.util.Map.of("kind", "deposited", "amount", 5));
	}

	@Test
	void deleteToLongMaxValueDeletesEverythingWithinTenSecondsAndKeepsTheHead() {
		String id = newId();
		List<EventToAppend> five = new ArrayList<>();
		for (int i = 1; i <= 5; i++) {
			five.add(EventToAppend.of(new Deposited(i), "account"));
		}
		result(journal().append(id, 0, five));
		result(journal().deleteTo(id, Long.MAX_VALUE), java.time.Duration.ofSeconds(10));
		assertThat(replayAll(journal(), id)).isEmpty();
		assertThat(result(journal().highestSequenceNr(id))).isEqualTo(5);
		result(journal().append(id, 5, List.of(EventToAppend.of(new Withdrawn(1)))));
		assertThat(replayAll(journal(), id)).extracting(PersistentEvent::sequenceNr).containsExactly(6L);
		result(journal().deleteTo(id, Long.MAX_VALUE), java.time.Duration.ofSeconds(10));
		assertThat(replayAll(journal(), id)).isEmpty();
		result(journal().deleteTo(newId(), Long.MAX_VALUE), java.time.Duration.ofSeconds(10));
	}

	@Test
	void consistencyCheckDoesNotReportDeletedEventsAsAGap() {
		String id = newId();
		List<EventToAppend> five = new ArrayList<>();
		for (int i = 1; i <= 5; i++) {
			five.add(EventToAppend.of(new Deposited(i)));
		}
		result(journal().append(id, 0, five));
		result(journal().deleteTo(id, 3));
		ConsistencyReport partly = result(journal().checkConsistency(id));
		assertThat(partly.missing()).isEmpty();
		assertThat(partly.head()).isEqualTo(5);
		assertThat(partly.highestStored()).isEqualTo(5);
		assertThat(partly.storedEvents()).isEqualTo(2);

		result(journal().deleteTo(id, 5));
		ConsistencyReport all = result(journal().checkConsistency(id));
		assertThat(all.missing()).isEmpty();
		assertThat(all.head()).isEqualTo(5);
		assertThat(all.storedEvents()).isZero();
	}

}
