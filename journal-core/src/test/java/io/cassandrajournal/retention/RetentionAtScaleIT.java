package io.cassandrajournal.retention;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.DepositBalance;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The demonstration: a cleanup of {@code entities x 100} events with a tag projection running and
 * appends going on, after which entity loads start at the snapshot, the projection holds every event exactly
 * as the journal had it, and the dry-run report matched what was deleted. 200 entities (20,000 events) by
 * default; {@code -Dretention.entities=1000} for the 100,000.
 */
@CassandraTest
class RetentionAtScaleIT {

	private static final int EVENTS_PER_ENTITY = 100;

	private static final int IN_FLIGHT = 32;

	@Test
	void aCleanupWithAProjectionRunningLeavesReplaysAtTheSnapshotAndTheProjectionConsistent(TestKeyspace keyspace) {
		int entities = Integer.getInteger("retention.entities", 200);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournalOptions options = CassandraJournalOptions.create().withKeyspace(keyspace.name())
			.withUseTagIndex(true);
		CassandraJournal journal = CassandraJournal.create(keyspace.session(), options, serializer);
		CassandraReadJournal query = CassandraReadJournal.create(journal, keyspace.session(), options, serializer);
		CassandraSnapshotStore snapshots = CassandraSnapshotStore.create(keyspace.session(), options, serializer);
		CassandraDurableStateStore states = CassandraDurableStateStore.create(keyspace.session(), options, serializer);
		RetentionRunner runner = RetentionRunner.create(JournalCleanup.create(keyspace.session(), journal), states,
				Clock.systemUTC());
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < entities; i++) {
			ids.add(String.format("scale-%05d", i));
		}
		Map<String, Set<Long>> seen = new ConcurrentHashMap<>();
		AtomicLong handled = new AtomicLong();
		try (ProjectionEngine engine = ProjectionEngine.builder(journal).readJournal(query)
			.offsetStore(new DurableStateOffsetStore(states)).build()) {
			ProjectionControl projection = engine.register(Projection.byTag("scale-balances", TagFilter.tag("scale"),
					AccountEvent.class, EventHandler.blocking((event) -> {
						seen.computeIfAbsent(event.persistenceId(), (k) -> ConcurrentHashMap.newKeySet())
							.add(event.sequenceNr());
						handled.incrementAndGet();
					}), ProjectionSettings.defaults()));
			result(projection.start());

			long started = System.nanoTime();
			inBatches(ids, (id) -> fill(journal, snapshots, id));
			long filled = System.nanoTime();
			long total = (long) entities * EVENTS_PER_ENTITY;
			await().alias("the projection has every event").atMost(Duration.ofSeconds(60))
				.until(() -> distinct(seen) == total);

			RetentionPolicy policy = RetentionPolicy.NONE.withKeepSnapshots(1).withPageSize(100).withParallelism(16);
			RetentionReport dry = result(runner.dryRun(policy), Duration.ofSeconds(120));
			assertThat(dry.entitiesCut()).isEqualTo(entities);
			assertThat(dry.events()).isEqualTo(entities * 80L);
			assertThat(dry.snapshots()).isEqualTo(entities);

			// Appends go on while the cleanup runs: ten more events on every tenth entity.
			CompletableFuture<Void> appends = CompletableFuture.runAsync(() -> inBatches(
					ids.stream().filter((id) -> id.endsWith("0")).toList(),
					(id) -> journal.append(id, EVENTS_PER_ENTITY, deposits(10)).thenApply((r) -> null)));
			long cleanupStarted = System.nanoTime();
			RetentionReport run = result(runner.run("scale", policy, (progress) -> {
			}), Duration.ofSeconds(180));
			long cleanupEnded = System.nanoTime();
			result(appends);

			assertThat(run).as("the run deleted what the dry run reported").isEqualTo(dry);
			long extra = ids.stream().filter((id) -> id.endsWith("0")).count() * 10;
			// Each entity: events 1..80 deleted, 81..100 (and the extra ten) left; its load starts at snapshot 80.
			EntityRepository<Long, AccountEvent> repository = EntityRepository
				.create(journal, snapshots, new DepositBalance(40), 0);
			AtomicLong stored = new AtomicLong();
			for (String id : ids) {
				List<Long> left = new ArrayList<>();
				result(journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> left.add(e.sequenceNr())));
				long head = id.endsWith("0") ? 110 : 100;
				assertThat(left).as(id).first().isEqualTo(81L);
				assertThat(left).as(id).hasSize((int) (head - 80));
				stored.addAndGet(left.size());
				assertThat(result(repository.load(id)).state()).as(id).isEqualTo(head);
			}
			assertThat(stored.get()).isEqualTo(total + extra - run.events());
			await().alias("the projection has every event, the new ones too").atMost(Duration.ofSeconds(60))
				.until(() -> distinct(seen) == total + extra);
			for (String id : ids) {
				long head = id.endsWith("0") ? 110 : 100;
				assertThat(seen.get(id)).as(id).hasSize((int) head).contains(1L, head);
			}
			System.out.printf("retention at scale: %d entities, %d events appended in %d ms, %d deleted in %d ms "
					+ "(%.0f events/s)%n", entities, total, (filled - started) / 1_000_000, run.events(),
					(cleanupEnded - cleanupStarted) / 1_000_000,
					run.events() * 1e9 / (cleanupEnded - cleanupStarted));
		}
	}

	private static long distinct(Map<String, Set<Long>> seen) {
		return seen.values().stream().mapToLong(Set::size).sum();
	}

	private static List<EventToAppend> deposits(int count) {
		List<EventToAppend> events = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			events.add(EventToAppend.of(new Deposited(1), "scale"));
		}
		return events;
	}

	/** Ten appends of ten events, snapshots (balance = sequence number) at 40 and 80. */
	private static CompletionStage<Void> fill(CassandraJournal journal, CassandraSnapshotStore snapshots, String id) {
		CompletionStage<Void> chain = CompletableFuture.completedFuture(null);
		for (int round = 0; round < EVENTS_PER_ENTITY / 10; round++) {
			long expected = round * 10L;
			chain = chain.thenCompose((ignored) -> journal.append(id, expected, deposits(10)))
				.thenCompose((appended) -> (appended.lastSequenceNr() % 40 == 0)
						? snapshots.save(id, appended.lastSequenceNr(), appended.lastSequenceNr())
						: CompletableFuture.completedFuture(null));
		}
		return chain;
	}

	private static void inBatches(List<String> ids, java.util.function.Function<String, CompletionStage<Void>> work) {
		for (int from = 0; from < ids.size(); from += IN_FLIGHT) {
			List<CompletableFuture<Void>> batch = new ArrayList<>();
			for (String id : ids.subList(from, Math.min(ids.size(), from + IN_FLIGHT))) {
				batch.add(work.apply(id).toCompletableFuture());
			}
			result(CompletableFuture.allOf(batch.toArray(CompletableFuture[]::new)), Duration.ofSeconds(120));
		}
	}

}
