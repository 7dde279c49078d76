package io.cassandrajournal.retention;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link RetentionRunner} on a real node: the dry run reports what the run then deletes, a re-run deletes
 * nothing, and a run that failed part-way resumes after its stored position. Each test has tables of its own
 * (the runner visits every id of its journal).
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RetentionRunnerIT {

	private TestKeyspace keyspace;

	private final SettableClock clock = new SettableClock(Instant.parse("2026-03-01T12:00:30Z"));

	@BeforeAll
	void keyspace(TestKeyspace keyspace) {
		this.keyspace = keyspace;
	}

	private CqlSession session() {
		return this.keyspace.session();
	}

	/** One journal (events, head, ids, minute-bucketed tag index, snapshots, durable state) per prefix. */
	private record Fixture(CassandraJournal journal, CassandraSnapshotStore snapshots, CassandraDurableStateStore states,
			JournalCleanup cleanup) {
	}

	private Fixture fixture(String prefix) {
		CassandraJournalOptions options = CassandraJournalOptions.create()
			.withKeyspace(this.keyspace.name())
			.withEventsTable(prefix + "_events")
			.withMetadataTable(prefix + "_metadata")
			.withAllIdsTable(prefix + "_ids")
			.withTagIndexTable(prefix + "_by_tag")
			.withSnapshotsTable(prefix + "_snapshots")
			.withDurableStateTable(prefix + "_state")
			.withUseTagIndex(true)
			.withTagBucketing(TagBucketing.MINUTE)
			.withPartitionSize(8)
			.withClock(this.clock);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal journal = CassandraJournal.create(session(), options, serializer);
		CassandraSnapshotStore snapshots = CassandraSnapshotStore.create(session(), options, serializer);
		CassandraDurableStateStore states = CassandraDurableStateStore.create(session(), options, serializer);
		return new Fixture(journal, snapshots, states, JournalCleanup.create(session(), journal));
	}

	/**
	 * 25 entities of 20 events (tagged), with snapshots at 5, 10 and 15 for the even ones; ids ending in 7 are to
	 * be deleted entirely. Events are stamped over three minutes (three buckets).
	 */
	private static List<String> fill(Fixture f, SettableClock clock) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < 25; i++) {
			String id = "acc-" + (100 + i);
			ids.add(id);
			for (int round = 0; round < 2; round++) {
				List<EventToAppend> events = new ArrayList<>();
				for (int k = 0; k < 10; k++) {
					events.add(EventToAppend.of(new Deposited(1), "retained"));
				}
				result(f.journal().append(id, round * 10, events));
			}
			if (i % 2 == 0) {
				for (long at : new long[] { 5, 10, 15 }) {
					result(f.snapshots().save(id, at, at));
				}
			}
			if (i == 8 || i == 16) {
				clock.advance(Duration.ofMinutes(1));
			}
		}
		return ids;
	}

	private static RetentionPolicy policy() {
		return RetentionPolicy.NONE.withKeepSnapshots(2)
			.withDeleteEntities((id) -> id.endsWith("7"))
			.withTagBucketsOlderThan(Duration.ofMinutes(1))
			.withPageSize(7)
			.withParallelism(3);
	}

	private static long storedEvents(Fixture f, List<String> ids) {
		long count = 0;
		for (String id : ids) {
			List<Long> seen = new ArrayList<>();
			result(f.journal().replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> seen.add(e.sequenceNr())));
			count += seen.size();
		}
		return count;
	}

	@Test
	void theDryRunReportsWhatTheRunDeletesAndARerunDeletesNothing() {
		Fixture f = fixture("rr_dry");
		List<String> ids = fill(f, this.clock);
		RetentionRunner runner = RetentionRunner.create(f.cleanup(), f.states(), this.clock);

		RetentionReport dry = result(runner.dryRun(policy()));
		// Deleted: acc-107 and acc-117, 20 events each, no snapshots (odd). Cut: the 13 even entities, events 1..10
		// (the oldest of 2 kept snapshots is 10) and snapshot 5 each. Buckets: events span three minutes and now is
		// in the third; 'older than one minute' ends before the second minute's bucket: the first one only.
		assertThat(dry.entities()).isEqualTo(25);
		assertThat(dry.entitiesDeleted()).isEqualTo(2);
		assertThat(dry.entitiesCut()).isEqualTo(13);
		assertThat(dry.events()).isEqualTo(2 * 20 + 13 * 10);
		assertThat(dry.snapshots()).isEqualTo(13);
		assertThat(dry.tagBuckets()).isEqualTo(1);
		assertThat(dry.complete()).isTrue();
		assertThat(storedEvents(f, ids)).as("the dry run deletes nothing").isEqualTo(25 * 20);
		assertThat(result(runner.position("nightly"))).isEmpty();

		List<RetentionReport> progress = new CopyOnWriteArrayList<>();
		RetentionReport run = result(runner.run("nightly", policy(), progress::add));

		assertThat(run).isEqualTo(dry);
		assertThat(progress).hasSize(5);
		assertThat(progress).extracting(RetentionReport::entities).containsExactly(7L, 14L, 21L, 25L, 25L);
		assertThat(progress.get(progress.size() - 1)).isEqualTo(run);
		assertThat(storedEvents(f, ids)).isEqualTo(25 * 20 - run.events());
		assertThat(result(runner.position("nightly"))).contains(run);

		RetentionReport again = result(runner.run("nightly", policy(), (r) -> {
		}));
		assertThat(again).isEqualTo(new RetentionReport(23, 0, 0, 0, 0, 0, "acc-124", true));
		assertThat(result(runner.dryRun(policy())).deletesSomething()).isFalse();
	}

	@Test
	void aRunThatFailedPartWayResumesAfterItsStoredPosition() {
		Fixture f = fixture("rr_resume");
		List<String> ids = fill(f, this.clock);
		RetentionReport dry = result(RetentionRunner.create(f.cleanup(), f.states(), this.clock).dryRun(policy()));
		AtomicInteger writes = new AtomicInteger();
		DurableStateStore failsThirdWrite = new DurableStateStore() {

			@Override
			public <S> CompletionStage<Optional<DurableState<S>>> get(String persistenceId, Class<S> type) {
				return f.states().get(persistenceId, type);
			}

			@Override
			public CompletionStage<Void> upsert(String persistenceId, long revision, Object value) {
				if (writes.incrementAndGet() == 3) {
					return CompletableFuture.failedFuture(new IllegalStateException("injected: position write failed"));
				}
				return f.states().upsert(persistenceId, revision, value);
			}

			@Override
			public CompletionStage<Void> delete(String persistenceId, long revision) {
				return f.states().delete(persistenceId, revision);
			}

		};
		assertThatThrownBy(() -> result(RetentionRunner.create(f.cleanup(), failsThirdWrite, this.clock)
			.run("resumed", policy(), (r) -> {
			}))).hasMessageContaining("injected");
		RetentionReport stored = result(RetentionRunner.create(f.cleanup(), f.states(), this.clock).position("resumed"))
			.orElseThrow();
		assertThat(stored.entities()).isEqualTo(14);
		assertThat(stored.after()).isEqualTo(ids.get(13));
		assertThat(stored.complete()).isFalse();

		List<RetentionReport> progress = new CopyOnWriteArrayList<>();
		RetentionReport resumed = result(RetentionRunner.create(f.cleanup(), f.states(), this.clock)
			.run("resumed", policy(), progress::add));

		assertThat(progress.get(0).entities()).as("continues after the stored page").isEqualTo(21);
		// The third page was done before its position write failed: done again, it deletes nothing more, and
		// acc-117, deleted entirely there, is no longer listed.
		assertThat(resumed.entities()).isEqualTo(24);
		assertThat(resumed.entitiesDeleted()).isEqualTo(1);
		assertThat(resumed.complete()).isTrue();
		assertThat(resumed.events()).isLessThanOrEqualTo(dry.events());
		assertThat(storedEvents(f, ids)).isEqualTo(25 * 20 - dry.events());
		assertThat(result(RetentionRunner.create(f.cleanup(), f.states(), this.clock).dryRun(policy()))
			.deletesSomething()).isFalse();
	}

	@Test
	void aPolicyOfNoneDeletesNothing() {
		Fixture f = fixture("rr_none");
		fill(f, this.clock);
		RetentionReport report = result(
				RetentionRunner.create(f.cleanup(), f.states(), Clock.systemUTC()).run("none", RetentionPolicy.NONE, (r) -> {
				}));
		assertThat(report).isEqualTo(new RetentionReport(25, 0, 0, 0, 0, 0, "acc-124", true));
	}

}
