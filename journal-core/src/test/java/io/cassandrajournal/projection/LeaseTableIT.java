package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.state.DurableStateConflictException;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Segment leases and fenced cursors on a real node: the building blocks for projections shared by several
 * instances (issue 15).
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LeaseTableIT {

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	private LeaseTable leases;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name());
		this.leases = LeaseTable.create(keyspace.session(), this.options);
	}

	private static String segment() {
		return "seg-" + System.nanoTime();
	}

	@Test
	void ofEightInstancesRacingForAFreeSegmentExactlyOneTakesIt() throws Exception {
		String segment = segment();
		ExecutorService pool = Executors.newFixedThreadPool(8);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Optional<Lease>>> attempts = new ArrayList<>();
			for (int i = 0; i < 8; i++) {
				String instance = "instance-" + i;
				attempts.add(pool.submit(() -> {
					start.await();
					return result(this.leases.acquire("p", segment, instance, Optional.empty()));
				}));
			}
			start.countDown();
			List<Lease> won = new ArrayList<>();
			for (Future<Optional<Lease>> attempt : attempts) {
				attempt.get(60, TimeUnit.SECONDS).ifPresent(won::add);
			}
			assertThat(won).hasSize(1);
			Lease stored = result(this.leases.read("p", segment)).orElseThrow();
			assertThat(stored.sameTerm(won.get(0))).isTrue();
			assertThat(stored.epoch()).isEqualTo(1);
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void aContenderWaitsWhileTheOwnerRenewsAndTakesOverOnceItFallsSilent() throws Exception {
		String segment = segment();
		Lease[] held = { result(this.leases.acquire("p", segment, "a", Optional.empty())).orElseThrow() };
		AtomicBoolean renewing = new AtomicBoolean(true);
		Thread owner = new Thread(() -> {
			while (renewing.get()) {
				held[0] = result(this.leases.renew(held[0])).orElseThrow();
				sleepQuietly(100);
			}
		});
		owner.start();
		LeaseWatch watch = new LeaseWatch(Duration.ofMillis(800));
		try {
			// Bound: the owner renews every ~100 ms, so for 2 s (2.5 timeouts) the contender never may take.
			await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50))
				.until(() -> !watch.mayTake(result(this.leases.read("p", segment)), System.nanoTime()));
		}
		finally {
			renewing.set(false);
			owner.join(10_000);
		}
		Optional<Lease>[] seen = new Optional[1];
		// Bound: once silent, the contender may take after one timeout (0.8 s) from its first sight of the beat.
		await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(50)).until(() -> {
			seen[0] = result(this.leases.read("p", segment));
			return watch.mayTake(seen[0], System.nanoTime());
		});
		Lease taken = result(this.leases.acquire("p", segment, "b", seen[0])).orElseThrow();
		assertThat(taken.epoch()).isEqualTo(2);
		assertThat(taken.heldBy("b")).isTrue();
		assertThat(result(this.leases.renew(held[0]))).as("the old owner's renewal is refused").isEmpty();
		assertThat(result(this.leases.release(held[0]))).as("and so is its release").isFalse();
		assertThat(result(this.leases.acquire("p", segment, "c", seen[0])))
			.as("a take conditioned on a row that changed since is refused").isEmpty();
	}

	@Test
	void aTakeConditionedOnARowTheOwnerRenewedSinceIsRefused() {
		String segment = segment();
		Lease owner = result(this.leases.acquire("p", segment, "a", Optional.empty())).orElseThrow();
		Optional<Lease> seen = result(this.leases.read("p", segment));
		// The owner renews after the contender read the row (same owner and epoch, a new heartbeat).
		assertThat(result(this.leases.renew(owner))).isPresent();
		assertThat(result(this.leases.acquire("p", segment, "b", seen)))
			.as("the contender watched a heartbeat that has moved on: the owner is alive").isEmpty();
		assertThat(result(this.leases.read("p", segment)).orElseThrow().heldBy("a")).isTrue();
	}

	@Test
	void aReleasedSegmentIsTakenAtOnceUnderAHigherEpoch() {
		String segment = segment();
		Lease a = result(this.leases.acquire("p", segment, "a", Optional.empty())).orElseThrow();
		assertThat(result(this.leases.release(a))).isTrue();
		Optional<Lease> row = result(this.leases.read("p", segment));
		assertThat(new LeaseWatch(Duration.ofHours(1)).mayTake(row, System.nanoTime())).isTrue();
		Lease b = result(this.leases.acquire("p", segment, "b", row)).orElseThrow();
		assertThat(b.epoch()).isEqualTo(2);
		assertThat(result(this.leases.renew(a))).isEmpty();
		assertThat(result(this.leases.renew(b))).isPresent();
	}

	@Test
	void aTakeWhoseOutcomeIsUnknownIsSettledByReadingTheRowBack() {
		FaultInjectingSession faults = new FaultInjectingSession(this.keyspace.session());
		LeaseTable faulty = LeaseTable.create(faults.session(), this.options);
		String applied = segment();
		faults.applyThenTimeOut(FaultInjectingSession.lightweightTransactions(), 1);
		assertThat(result(faulty.acquire("p", applied, "a", Optional.empty()))).as("applied, then timed out: held")
			.hasValueSatisfying((lease) -> assertThat(lease.heldBy("a")).isTrue());
		String notApplied = segment();
		faults.timeOutWithoutApplying(FaultInjectingSession.lightweightTransactions(), 1);
		assertThat(result(faulty.acquire("p", notApplied, "a", Optional.empty())))
			.as("timed out without being applied: not held").isEmpty();
		assertThat(result(this.leases.acquire("p", notApplied, "b", Optional.empty()))).isPresent();
		assertThat(faults.injected()).isEqualTo(2);
	}

	@Test
	void aFencedCursorRefusesThePreviousOwnersNextSaveEvenOneItCouldMistakeForItsOwn() {
		FaultInjectingSession faults = new FaultInjectingSession(this.keyspace.session());
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		DurableStateOffsetStore previous = new DurableStateOffsetStore(
				CassandraDurableStateStore.create(faults.session(), this.options, serializer));
		DurableStateOffsetStore next = new DurableStateOffsetStore(
				CassandraDurableStateStore.create(this.keyspace.session(), this.options, serializer));
		ProjectionId id = new ProjectionId("shared", segment());
		TagOffset first = new TagOffset(1_000, "a", 1);
		result(previous.save(id, first));
		// The previous owner saves the same cursor again and never learns the outcome (it was not applied), so it
		// remembers `first` as a save that may have landed at revision 2.
		faults.timeOutWithoutApplying(FaultInjectingSession.writesTo(this.options.durableStateTable()), 1);
		assertThatThrownBy(() -> result(previous.save(id, first))).isNotNull();
		// Its lease lapses; the next owner fences the cursor and resumes from `first`.
		assertThat(result(next.fence(id, TagOffset.START, 2))).isEqualTo(first);
		// The previous owner wakes up and saves: refused. (With a single bump it would find `first` at revision 2,
		// take that for its own lost save, and overwrite the next owner's cursor.)
		assertThatThrownBy(() -> result(previous.save(id, new TagOffset(2_000, "a", 2))))
			.isInstanceOf(DurableStateConflictException.class);
		TagOffset later = new TagOffset(3_000, "b", 7);
		result(next.save(id, later));
		assertThat(result(next.load(id))).contains(later);
	}

	@Test
	void fencingAnAbsentCursorWritesTheStartSoThePreviousOwnerCannotCreateIt() {
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		DurableStateOffsetStore previous = new DurableStateOffsetStore(
				CassandraDurableStateStore.create(this.keyspace.session(), this.options, serializer));
		DurableStateOffsetStore next = new DurableStateOffsetStore(
				CassandraDurableStateStore.create(this.keyspace.session(), this.options, serializer));
		ProjectionId id = new ProjectionId("shared", segment());
		assertThat(result(previous.load(id))).isEmpty();
		assertThat(result(next.fence(id, TagOffset.START, 2))).isEqualTo(TagOffset.START);
		assertThatThrownBy(() -> result(previous.save(id, new TagOffset(5, "x", 1))))
			.isInstanceOf(DurableStateConflictException.class);
	}

	@Test
	void aFenceUnderAnOlderEpochIsRefusedOnceANewerOwnerFenced() {
		DurableStateOffsetStore b = offsetStore();
		DurableStateOffsetStore c = offsetStore();
		ProjectionId id = new ProjectionId("shared", segment());
		TagOffset cs = new TagOffset(1_000, "c", 1);
		// B took epoch 2 and paused before fencing; C took epoch 3, fenced and saved.
		result(c.fence(id, TagOffset.START, 3));
		result(c.save(id, cs, 3));
		// B wakes up and fences: refused (before, it re-read, bumped twice, and C's saves conflicted).
		assertThatThrownBy(() -> result(b.fence(id, TagOffset.START, 2))).isInstanceOf(CursorFencedException.class);
		TagOffset later = new TagOffset(2_000, "c", 2);
		result(c.save(id, later, 3));
		assertThat(result(offsetStore().load(id))).contains(later);
	}

	@Test
	void aSharedCursorIsNotSavedBeforeItWasFenced() {
		ProjectionId id = new ProjectionId("shared", segment());
		DurableStateOffsetStore owner = offsetStore();
		result(owner.fence(id, TagOffset.START, 1));
		result(owner.save(id, new TagOffset(1_000, "a", 1), 1));
		// Another instance that never fenced (so never held the lease) cannot adopt the stored revision and save.
		assertThatThrownBy(() -> result(offsetStore().save(id, new TagOffset(9_000, "z", 9), 1)))
			.isInstanceOf(CursorFencedException.class);
		assertThat(result(offsetStore().load(id))).contains(new TagOffset(1_000, "a", 1));
	}

	@Test
	void aResetByAPreviousOwnerIsACompareAndSetAndIsRefusedOnceFenced() {
		ProjectionId id = new ProjectionId("shared", segment());
		DurableStateOffsetStore previous = offsetStore();
		DurableStateOffsetStore next = offsetStore();
		result(previous.fence(id, TagOffset.START, 1));
		TagOffset nexts = new TagOffset(5_000, "n", 5);
		result(next.fence(id, TagOffset.START, 2));
		result(next.save(id, nexts, 2));
		// The previous owner's reset (to the start) must not delete or overwrite the new owner's cursor.
		assertThatThrownBy(() -> result(new FencedCursor(previous, term(1)).delete(id))).isNotNull();
		assertThat(result(offsetStore().load(id))).contains(nexts);
		// The owner's own reset is a compare-and-set write of the start offset, under its epoch.
		result(new FencedCursor(next, term(2)).delete(id));
		assertThat(result(offsetStore().load(id))).contains(TagOffset.START);
		assertThatThrownBy(() -> result(previous.fence(id, TagOffset.START, 1))).isInstanceOf(CursorFencedException.class);
	}

	@Test
	void aCursorWithAnEpochStillReadsAsAPlainOffsetAndOneWithoutReadsAsEpochZero() {
		CassandraDurableStateStore plain = CassandraDurableStateStore.create(this.keyspace.session(), this.options,
				new JacksonEventSerializer());
		ProjectionId id = new ProjectionId("shared", segment());
		TagOffset before = new TagOffset(1_000, "a", 1);
		// Written by today's single-instance save: no epoch. A lease owner of epoch 1 fences from it.
		result(offsetStore().save(id, before));
		DurableStateOffsetStore owner = offsetStore();
		assertThat(result(owner.fence(id, TagOffset.START, 1))).isEqualTo(before);
		TagOffset after = new TagOffset(2_000, "b", 2);
		result(owner.save(id, after, 1));
		String payload = this.keyspace.session()
			.execute("SELECT payload FROM " + this.options.durableStateTable() + " WHERE persistence_id = ?",
					DurableStateOffsetStore.key(id))
			.one().getString("payload");
		assertThat(new JacksonEventSerializer().deserialize(payload, Map.class))
			.isEqualTo(Map.of("timestamp", 2000, "persistenceId", "b", "sequenceNr", 2, "epoch", 1));
		// A reader that knows nothing of epochs (an older instance, or the TypeScript implementation's JSON.parse)
		// still reads the offset.
		assertThat(result(plain.get(DurableStateOffsetStore.key(id), TagOffset.class)).orElseThrow().value())
			.isEqualTo(after);
		assertThat(result(offsetStore().load(id))).contains(after);
	}

	private static LeaseTerm term(long epoch) {
		return new LeaseTerm(new Lease("shared", "0-1023", "owner", epoch, 0), System.nanoTime(), Duration.ofHours(1),
				System::nanoTime);
	}

	private DurableStateOffsetStore offsetStore() {
		return new DurableStateOffsetStore(
				CassandraDurableStateStore.create(this.keyspace.session(), this.options, new JacksonEventSerializer()));
	}

	@Test
	void watchingMoreSegmentsThanFitInOnePageReturnsEveryRow() {
		LeaseTable paged = LeaseTable.create(this.keyspace.session(), this.options.withPageSize(2));
		String projection = "paged-" + System.nanoTime();
		List<String> segments = List.of("s1", "s2", "s3", "s4", "s5");
		for (String segment : segments) {
			assertThat(result(paged.acquire(projection, segment, "a", Optional.empty()))).isPresent();
		}
		assertThat(result(paged.watch(projection, segments))).containsOnlyKeys(segments);
	}

	@Test
	void listingMoreMembersThanFitInOnePageReturnsEveryMember() {
		MemberTable paged = MemberTable.create(this.keyspace.session(), this.options.withPageSize(2));
		String projection = "paged-" + System.nanoTime();
		List<String> members = List.of("m1", "m2", "m3", "m4", "m5");
		for (String member : members) {
			result(paged.beat(projection, member, Duration.ofMinutes(1)));
		}
		assertThat(result(paged.list(projection))).containsOnlyKeys(members);
	}

	private static void sleepQuietly(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
