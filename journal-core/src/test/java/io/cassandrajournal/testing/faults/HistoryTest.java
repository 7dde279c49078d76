package io.cassandrajournal.testing.faults;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.testing.faults.History.OpKind;
import io.cassandrajournal.testing.faults.History.Outcome;

import static org.assertj.core.api.Assertions.assertThat;

class HistoryTest {

	@Test
	void recordsEveryFieldOfAnOperation() {
		History history = new History();
		int account = history.entity("account-1");
		int op = history.invoke(OpKind.WITHDRAW, 3, account, 0, 1, 120);
		history.complete(op, Outcome.UNKNOWN, 41, 43);

		assertThat(history.kind(op)).isEqualTo(OpKind.WITHDRAW);
		assertThat(history.outcome(op)).isEqualTo(Outcome.UNKNOWN);
		assertThat(history.client(op)).isEqualTo(3);
		assertThat(history.entityOf(op)).isEqualTo(account);
		assertThat(history.value(op)).isEqualTo(120);
		assertThat(history.first(op)).isEqualTo(41);
		assertThat(history.last(op)).isEqualTo(43);
		assertThat(history.completedMicros(op)).isGreaterThanOrEqualTo(history.invokedMicros(op));
		assertThat(history.describe(op)).contains("WITHDRAW account-1 amount 120 -> UNKNOWN [41..43]");
	}

	@Test
	void holdsAHundredThousandOperationsInAFewMegabytes() {
		History history = new History();
		int entity = history.entity("hot-0");
		for (int i = 0; i < 150_000; i++) {
			int op = history.invoke(OpKind.APPEND, i % 8, entity, i, 1 + (i % 3), 0);
			history.complete(op, (i % 2 == 0) ? Outcome.OK : Outcome.FAILED, i + 1, i + 1 + (i % 3));
		}

		assertThat(history.size()).isEqualTo(150_000);
		assertThat(history.retainedBytes()).as("bytes for 150,000 operations").isLessThan(8L * 1024 * 1024);
		assertThat(history.expected(149_999)).isEqualTo(149_999);
		assertThat(history.last(149_999)).isEqualTo(150_000 + (149_999 % 3));
		assertThat(history.outcome(149_999)).isEqualTo(Outcome.FAILED);
	}

	@Test
	void keepsTheFailureOfAnOperationAndShowsItInItsLine() {
		History history = new History();
		int entity = history.entity("hot-1");
		int op = history.invoke(OpKind.APPEND, 2, entity, 556, 2, 0);
		history.complete(op, Outcome.FAILED, 0, 0);
		history.failure(op, new io.cassandrajournal.JournalUnavailableException("Append to 'hot-1' failed: timed out",
				new IllegalStateException("timed out")));
		int ok = history.invoke(OpKind.APPEND, 2, entity, 558, 1, 0);
		history.complete(ok, Outcome.OK, 559, 559);

		assertThat(history.describe(op)).endsWith(
				"-> FAILED: JournalUnavailableException(Append to 'hot-1' failed: timed out) <- IllegalStateException");
		assertThat(history.failure(ok)).isNull();
		assertThat(history.describe(ok)).endsWith("-> OK [559..559]");
	}

	@Test
	void holdsAHundredThousandOperationsWithTheirFailuresInAFewTensOfMegabytes() {
		History history = new History();
		int entity = history.entity("hot-0");
		String padding = "x".repeat(300);
		for (int i = 0; i < 150_000; i++) {
			int op = history.invoke(OpKind.APPEND, i % 8, entity, i, 1, 0);
			history.complete(op, (i % 2 == 0) ? Outcome.OK : Outcome.UNKNOWN, 0, 0);
			if (i % 2 == 1) {
				// Every message distinct (a sequence number in it), longer than a line keeps.
				history.failure(op, new IllegalStateException("claim of " + i + " timed out " + padding));
			}
		}

		assertThat(history.failure(149_999)).startsWith("IllegalStateException(claim of 149999 timed out").hasSizeLessThan(
				History.FAILURE_CHARS + 4);
		// 150,000 operations in a 512 MB heap with room to spare: well under 64 MB in all.
		assertThat(history.retainedBytes()).as("bytes for 150,000 operations, half with a failure")
			.isLessThan(64L * 1024 * 1024);
	}

}
