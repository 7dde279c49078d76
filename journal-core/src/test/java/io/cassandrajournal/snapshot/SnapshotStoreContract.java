package io.cassandrajournal.snapshot;

import java.util.UUID;

import org.junit.jupiter.api.Test;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/** The {@link SnapshotStore} contract. */
public abstract class SnapshotStoreContract {

	protected abstract SnapshotStore store();

	record Balance(long amount) {
	}

	@Test
	void loadsTheLatestAtOrBelowASequenceNrAndDeletesOlderOnes() {
		String id = "account-" + UUID.randomUUID();
		assertThat(result(store().loadLatest(id, Long.MAX_VALUE, Balance.class))).isEmpty();
		result(store().save(id, 10, new Balance(100)));
		result(store().save(id, 20, new Balance(200)));
		result(store().save(id, 30, new Balance(300)));
		assertThat(result(store().loadLatest(id, Long.MAX_VALUE, Balance.class)).orElseThrow().state())
			.isEqualTo(new Balance(300));
		Snapshot<Balance> atOrBelow25 = result(store().loadLatest(id, 25, Balance.class)).orElseThrow();
		assertThat(atOrBelow25.sequenceNr()).isEqualTo(20);
		assertThat(atOrBelow25.state()).isEqualTo(new Balance(200));
		assertThat(result(store().loadLatest(id, 5, Balance.class))).isEmpty();

		result(store().deleteOlderThan(id, 30));
		assertThat(result(store().loadLatest(id, 25, Balance.class))).isEmpty();
		assertThat(result(store().loadLatest(id, Long.MAX_VALUE, Balance.class)).orElseThrow().sequenceNr()).isEqualTo(30);
	}

	@Test
	void aSnapshotThatCannotBeReadAsTheStateIsSteppedOverForTheNextOlderOne() {
		String id = "account-" + UUID.randomUUID();
		result(store().save(id, 10, new Balance(100)));
		// Another writer's snapshot in another shape (a JSON string is no Balance).
		result(store().save(id, 20, "written by another implementation"));
		Snapshot<Balance> loaded = result(store().loadLatest(id, Long.MAX_VALUE, Balance.class)).orElseThrow();
		assertThat(loaded.sequenceNr()).isEqualTo(10);
		assertThat(loaded.state()).isEqualTo(new Balance(100));

		String onlyForeign = "account-" + UUID.randomUUID();
		result(store().save(onlyForeign, 5, "written by another implementation"));
		assertThat(result(store().loadLatest(onlyForeign, Long.MAX_VALUE, Balance.class))).isEmpty();
	}

}
