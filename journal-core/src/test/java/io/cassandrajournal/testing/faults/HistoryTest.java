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

}
