package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.state.DurableState;
import io.cassandrajournal.state.DurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * A shared per-persistenceId fan-out's lease terms on a real node, one instance: a change in the number of segments
 * (entity cursors fenced under another lease row, whose epochs start again at 1), a reset while the entities'
 * cursors are still being fenced, a handler factory that throws for one entity, and a projection registered on
 * the cursor of one of the fan-out's entities.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SharedFanOutTermsIT {

	private SharedProjectionFixture shared;

	private CassandraJournal journal;

	private CassandraDurableStateStore state;

	private final Map<String, Long> heads = new ConcurrentHashMap<>();

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.shared = new SharedProjectionFixture(keyspace);
		this.journal = this.shared.journal;
		this.state = this.shared.state;
	}

	/**
	 * Three terms of a one-segment fan-out leave each entity cursor written under epoch 3 of lease row
	 * {@code 0-1023}; with two segments the cursors are fenced under rows {@code 0-511} and {@code 512-1023} at epoch
	 * 1. The new owner must run them at once: refusing the lower epoch of another row ended the term, and the
	 * segment ran only once retaken (a lease timeout each) at an epoch as high as the old row's.
	 */
	@Test
	void aChangeInTheNumberOfSegmentsRunsTheEntitiesUnderTheNewRowsFirstTerm() {
		String prefix = "seg" + System.nanoTime();
		List<String> entities = entities(prefix, 8);
		Map<String, Long> handled = new ConcurrentHashMap<>();
		for (int round = 1; round <= 3; round++) {
			for (String entity : entities) {
				append(entity, 1);
			}
			try (ProjectionEngine engine = engine(this.state)) {
				fanOut(engine, prefix, 1, (entity) -> handle(handled));
				// Bound: live after ~2 renewals, take, fence, poll every 100 ms.
				await("round " + round + " handled").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
					.until(() -> caughtUp(handled, entities));
				result(engine.stopAll());
			}
		}
		long oldEpoch = epoch(prefix, SliceRange.split(1).get(0).key());
		assertThat(oldEpoch).as("the one-segment row's epoch after three terms").isGreaterThanOrEqualTo(3);
		assertThat(storedEpoch(prefix, entities.get(0))).as("a cursor's stored epoch").isEqualTo(oldEpoch);

		for (String entity : entities) {
			append(entity, 2);
		}
		try (ProjectionEngine engine = engine(this.state)) {
			fanOut(engine, prefix, 2, (entity) -> handle(handled));
			// Bound: as above, well under the two lease timeouts (6 s) the old code needed at the least.
			await("every entity handled under two segments").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100)).until(() -> caughtUp(handled, entities));
			for (SliceRange range : SliceRange.split(2)) {
				assertThat(epoch(prefix, range.key())).as("segment %s taken once", range.key()).isEqualTo(1);
			}
			assertThat(storedLease(prefix, entities.get(0))).as("the row a cursor is fenced under")
				.isIn(SliceRange.split(2).stream().map(SliceRange::key).toList());
			assertThat(engine.projection(prefix).orElseThrow().status().state()).isEqualTo(ProjectionState.RUNNING);
		}
	}

	/**
	 * A reset called while the entities' runners are still fencing their cursors (their start's load) waits for
	 * it: it used to write the start offset before the fence (refused: "needs a fence first"), which ended the
	 * term and failed the reset.
	 */
	@Test
	void aResetWhileTheEntitiesCursorsAreBeingFencedRebuildsThem() {
		String prefix = "reset" + System.nanoTime();
		List<String> entities = entities(prefix, 4);
		for (String entity : entities) {
			append(entity, 3);
		}
		GatedStore gated = new GatedStore(this.state, "projection-offset|" + prefix + "-");
		Map<String, Long> handled = new ConcurrentHashMap<>();
		try (ProjectionEngine engine = engine(gated)) {
			fanOut(engine, prefix, 1, (entity) -> handle(handled));
			// Bound: live after ~2 renewals, then the take starts every entity, whose fence write waits at the gate.
			await("an entity's fence held at the gate").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(20)).until(() -> gated.held.get() > 0);
			CompletionStage<Void> reset = engine.projection(prefix).orElseThrow().reset(TagOffset.START);
			gated.open();
			result(reset, Duration.ofSeconds(20));
			await("every entity handled after the reset").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100)).until(() -> caughtUp(handled, entities));
			assertThat(epoch(prefix, SliceRange.split(1).get(0).key())).as("the segment kept its first term")
				.isEqualTo(1);
		}
	}

	/**
	 * The user's handler factory throws for one entity: the others all run, the failing one is reported FAILED, and
	 * a projection registered on the cursor of one of the fan-out's entities is refused.
	 */
	@Test
	void anEntityWhoseHandlerCannotBeMadeDoesNotStopTheOthers() {
		oneEntityWhoseHandlerCannotBeMade((entity) -> {
			throw new IllegalStateException("no handler for " + entity);
		});
	}

	/**
	 * The same with an Error (a handler class that cannot be initialized): it used to escape the segment's take and
	 * end the lease loop (scheduleWithFixedDelay stops at a throw) while the renewals kept the segment held, so the
	 * entities after the failing one never ran; or, routed by discovery, it ended the discovery task.
	 */
	@Test
	void anEntityWhoseHandlerFactoryThrowsAnErrorDoesNotStopTheOthers() {
		oneEntityWhoseHandlerCannotBeMade((entity) -> {
			throw new ExceptionInInitializerError("no handler class for " + entity);
		});
	}

	private void oneEntityWhoseHandlerCannotBeMade(Consumer<String> fail) {
		String prefix = "bad" + System.nanoTime();
		List<String> entities = entities(prefix, 12);
		String bad = entities.get(5);
		for (String entity : entities) {
			append(entity, 2);
		}
		Map<String, Long> handled = new ConcurrentHashMap<>();
		try (ProjectionEngine engine = engine(this.state)) {
			fanOut(engine, prefix, 1, (entity) -> {
				if (entity.equals(bad)) {
					fail.accept(entity);
				}
				return handle(handled);
			});
			List<String> good = entities.stream().filter((e) -> !e.equals(bad)).toList();
			await("every other entity handled").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
				.until(() -> caughtUp(handled, good));
			assertThat(handled).doesNotContainKey(bad);
			assertThat(engine.projection(prefix).orElseThrow().status().state()).isEqualTo(ProjectionState.FAILED);
			// More entities after the failing one still run (discovered later).
			List<String> later = List.of(prefix + "-late-0", prefix + "-late-1");
			for (String entity : later) {
				append(entity, 1);
			}
			await("entities discovered later handled").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100)).until(() -> caughtUp(handled, later));

			assertThatThrownBy(() -> engine.register(Projection.byPersistenceId(prefix + "-" + bad, bad,
					AccountEvent.class, EventHandler.blocking((event) -> {
					}), ProjectionSettings.defaults()))).isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("shared fan-out");
		}
	}

	/**
	 * An entity whose handler cannot be made shows its stored cursor in the fan-out's status (finding 32, item 6): it
	 * showed START, as if it would run from the beginning, while it resumes from its cursor once its handler can be
	 * made. Here it is the fan-out's only entity, so the fan-out's status is its status.
	 */
	@Test
	void aFailedEntityShowsItsStoredCursor() {
		String prefix = "stored" + System.nanoTime();
		String bad = prefix + "-account-0";
		append(bad, 3);
		ProjectionId id = ProjectionId.byPersistenceId(prefix + "-" + bad, bad);
		TagOffset stored = id.offsetFromSequenceNr(2);
		result(new DurableStateOffsetStore(this.state).save(id, stored));
		try (ProjectionEngine engine = engine(this.state)) {
			fanOut(engine, prefix, 1, (entity) -> {
				throw new IllegalStateException("no handler for " + entity);
			});
			// Bound: live after ~2 renewals, then the take tries the entity and reads its cursor.
			await("the entity shows FAILED at its stored cursor").atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100)).until(() -> {
					ProjectionStatus status = engine.projection(prefix).orElseThrow().status();
					return status.state() == ProjectionState.FAILED && status.offset().equals(stored);
				});
			assertThat(engine.projection(prefix).orElseThrow().status().lastError()).contains("no handler for " + bad)
				.doesNotContain("stored cursor");
		}
	}

	private ProjectionEngine engine(DurableStateStore cursors) {
		return this.shared.engine("a", cursors).build();
	}

	private static void fanOut(ProjectionEngine engine, String prefix, int segments,
			Function<String, EventHandler<AccountEvent>> handlerFor) {
		engine.fanOut(prefix, AccountEvent.class, handlerFor, ProjectionSettings.defaults().withSegments(segments)
			.withPollInterval(Duration.ofMillis(100)).withFeed(new FeedSettings(Duration.ZERO, Duration.ofSeconds(1), 20)),
				Duration.ofMillis(200));
	}

	private static EventHandler<AccountEvent> handle(Map<String, Long> handled) {
		return EventHandler.blocking((event) -> handled.merge(event.persistenceId(), event.sequenceNr(), Math::max));
	}

	private boolean caughtUp(Map<String, Long> handled, List<String> entities) {
		return entities.stream().allMatch((e) -> handled.getOrDefault(e, 0L).equals(this.heads.get(e)));
	}

	private static List<String> entities(String prefix, int count) {
		List<String> entities = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			entities.add(prefix + "-account-" + i);
		}
		return entities;
	}

	private void append(String entity, int events) {
		long head = this.heads.getOrDefault(entity, 0L);
		List<EventToAppend> batch = new ArrayList<>();
		for (int i = 0; i < events; i++) {
			batch.add(EventToAppend.of(new Deposited(1), "terms"));
		}
		result(this.journal.append(entity, head, batch));
		this.heads.put(entity, head + events);
	}

	private long epoch(String prefix, String segment) {
		return result(this.shared.leases.read(prefix, segment)).orElseThrow().epoch();
	}

	private DurableStateOffsetStore.StoredCursor stored(String prefix, String entity) {
		String key = DurableStateOffsetStore.key(ProjectionId.byPersistenceId(prefix + "-" + entity, entity));
		Optional<DurableState<DurableStateOffsetStore.StoredCursor>> stored = result(
				this.state.get(key, DurableStateOffsetStore.StoredCursor.class));
		return stored.orElseThrow().value();
	}

	private long storedEpoch(String prefix, String entity) {
		return stored(prefix, entity).cursor().epoch();
	}

	private String storedLease(String prefix, String entity) {
		return stored(prefix, entity).cursor().lease();
	}

	/** Holds the writes of some keys until opened (a fence in flight, for as long as the test needs). */
	private static final class GatedStore implements DurableStateStore {

		private final DurableStateStore delegate;

		private final String heldPrefix;

		private final CompletableFuture<Void> gate = new CompletableFuture<>();

		final AtomicInteger held = new AtomicInteger();

		GatedStore(DurableStateStore delegate, String prefix) {
			this.delegate = delegate;
			this.heldPrefix = prefix;
		}

		void open() {
			this.gate.complete(null);
		}

		@Override
		public <S> CompletionStage<Optional<DurableState<S>>> get(String persistenceId, Class<S> type) {
			return this.delegate.get(persistenceId, type);
		}

		@Override
		public CompletionStage<Void> upsert(String persistenceId, long revision, Object value) {
			if (!persistenceId.startsWith(this.heldPrefix) || this.gate.isDone()) {
				return this.delegate.upsert(persistenceId, revision, value);
			}
			this.held.incrementAndGet();
			return this.gate.thenCompose((ignored) -> this.delegate.upsert(persistenceId, revision, value));
		}

		@Override
		public CompletionStage<Void> delete(String persistenceId, long revision) {
			return this.delegate.delete(persistenceId, revision);
		}

	}

}
