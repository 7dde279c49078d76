package io.cassandrajournal.state;

import java.util.Map;
import java.util.UUID;

import org.junit.jupiter.api.Test;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/** The {@link DurableStateStore} contract. */
public abstract class DurableStateStoreContract {

	protected abstract DurableStateStore store();

	record Offset(long value) {
	}

	@Test
	void insertsThenUpdatesRevisionByRevision() {
		String key = "k-" + UUID.randomUUID();
		assertThat(result(store().get(key, Offset.class))).isEmpty();
		result(store().upsert(key, 1, new Offset(10)));
		result(store().upsert(key, 2, new Offset(20)));
		DurableState<Offset> state = result(store().get(key, Offset.class)).orElseThrow();
		assertThat(state.revision()).isEqualTo(2);
		assertThat(state.value()).isEqualTo(new Offset(20));
		assertThat(result(store().get(key, Map.class)).orElseThrow().value()).isEqualTo(Map.of("value", 20));
	}

	@Test
	void rejectsAWriteAtAStaleOrSkippedRevision() {
		String key = "k-" + UUID.randomUUID();
		result(store().upsert(key, 1, new Offset(1)));
		assertThatExceptionOfType(DurableStateConflictException.class)
			.isThrownBy(() -> result(store().upsert(key, 1, new Offset(2))))
			.satisfies((ex) -> assertThat(ex.actualRevision()).isEqualTo(1));
		assertThatExceptionOfType(DurableStateConflictException.class)
			.isThrownBy(() -> result(store().upsert(key, 3, new Offset(3))))
			.satisfies((ex) -> {
				assertThat(ex.expectedRevision()).isEqualTo(2);
				assertThat(ex.actualRevision()).isEqualTo(1);
			});
		assertThatExceptionOfType(DurableStateConflictException.class)
			.isThrownBy(() -> result(store().upsert("k-" + UUID.randomUUID(), 2, new Offset(3))))
			.satisfies((ex) -> assertThat(ex.actualRevision()).isZero());
		assertThat(result(store().get(key, Offset.class)).orElseThrow().value()).isEqualTo(new Offset(1));
	}

	@Test
	void deletesOnlyAtTheExpectedRevision() {
		String key = "k-" + UUID.randomUUID();
		result(store().upsert(key, 1, new Offset(1)));
		assertThatExceptionOfType(DurableStateConflictException.class)
			.isThrownBy(() -> result(store().delete(key, 5)));
		result(store().delete(key, 1));
		assertThat(result(store().get(key, Offset.class))).isEmpty();
		result(store().delete(key, 1));
		result(store().upsert(key, 1, new Offset(7)));
		assertThat(result(store().get(key, Offset.class)).orElseThrow().revision()).isEqualTo(1);
	}

}
