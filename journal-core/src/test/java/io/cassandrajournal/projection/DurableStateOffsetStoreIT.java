package io.cassandrajournal.projection;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.state.DurableStateConflictException;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.FaultInjectingSession.cqlContains;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Durable offsets when a compare-and-set save times out after Cassandra applied it: the cursor must not
 * freeze (every later save conflicting with the stale cached revision), and two instances still fence
 * each other.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class DurableStateOffsetStoreIT {

	private FaultInjectingSession faults;

	private CassandraDurableStateStore state;

	private CassandraDurableStateStore healthyState;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name());
		this.faults = new FaultInjectingSession(keyspace.session());
		this.state = CassandraDurableStateStore.create(this.faults.session(), options, new JacksonEventSerializer());
		this.healthyState = CassandraDurableStateStore.create(keyspace.session(), options, new JacksonEventSerializer());
	}

	@AfterEach
	void heal() {
		this.faults.heal();
		this.faults.applyThenTimeOut((s) -> false, 0);
	}

	private static ProjectionId id() {
		return new ProjectionId("view", "key-" + System.nanoTime());
	}

	private static TagOffset at(long timestamp) {
		return new TagOffset(timestamp, "p", timestamp);
	}

	private TagOffset stored(ProjectionId id) {
		return result(new DurableStateOffsetStore(this.healthyState).load(id)).orElseThrow();
	}

	@Test
	void aSaveThatTimedOutAfterItWasAppliedIsResolvedByReadingItBack() {
		ProjectionId id = id();
		DurableStateOffsetStore offsets = new DurableStateOffsetStore(this.state);
		result(offsets.save(id, at(1)));
		int injectedBefore = this.faults.injected();
		this.faults.applyThenTimeOut(cqlContains("SET revision"), 1);

		result(offsets.save(id, at(2)));
		assertThat(this.faults.injected() - injectedBefore).as("the save was applied, then timed out").isEqualTo(1);
		assertThat(stored(id)).isEqualTo(at(2));
		result(offsets.save(id, at(3)));
		assertThat(stored(id)).isEqualTo(at(3));
	}

	@Test
	void aSaveWhoseOutcomeStayedUnknownIsResolvedByTheNextSave() {
		ProjectionId id = id();
		DurableStateOffsetStore offsets = new DurableStateOffsetStore(this.state);
		result(offsets.save(id, at(1)));
		// Applied, timed out, and the read-back fails too (Cassandra going away): the outcome stays unknown.
		this.faults.applyThenTimeOut(cqlContains("SET revision"), 1);
		this.faults.failMatching(cqlContains("SELECT revision"));
		assertThatExceptionOfType(JournalUnavailableException.class).isThrownBy(() -> result(offsets.save(id, at(2))));
		assertThat(stored(id)).as("it was applied").isEqualTo(at(2));
		this.faults.heal();

		result(offsets.save(id, at(3)));
		assertThat(stored(id)).isEqualTo(at(3));
		result(offsets.save(id, at(4)));
		assertThat(stored(id)).isEqualTo(at(4));
	}

	@Test
	void aSaveThatTimedOutWithoutBeingAppliedFailsAndTheNextOneSucceeds() {
		ProjectionId id = id();
		DurableStateOffsetStore offsets = new DurableStateOffsetStore(this.state);
		result(offsets.save(id, at(1)));
		this.faults.failMatching(cqlContains("SET revision"));
		assertThatExceptionOfType(JournalUnavailableException.class).isThrownBy(() -> result(offsets.save(id, at(2))));
		this.faults.heal();
		assertThat(stored(id)).isEqualTo(at(1));
		result(offsets.save(id, at(3)));
		assertThat(stored(id)).isEqualTo(at(3));
	}

	@Test
	void twoInstancesStillFenceEachOtherAfterAnUnknownOutcome() {
		ProjectionId id = id();
		DurableStateOffsetStore first = new DurableStateOffsetStore(this.state);
		DurableStateOffsetStore second = new DurableStateOffsetStore(this.healthyState);
		result(first.save(id, at(1)));
		// The first instance's save of 2 is not applied and its outcome stays unknown; the second one moves on.
		this.faults.failMatching(cqlContains("revision"));
		assertThatExceptionOfType(JournalUnavailableException.class).isThrownBy(() -> result(first.save(id, at(2))));
		this.faults.heal();
		result(second.load(id));
		result(second.save(id, at(5)));

		assertThatExceptionOfType(DurableStateConflictException.class).isThrownBy(() -> result(first.save(id, at(3))));
		assertThat(stored(id)).isEqualTo(at(5));
	}

}
