package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import ch.qos.logback.classic.Level;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.testing.JournalLogs;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The per-persistenceId fan-out without sharing, over the in-memory journal: a handler factory that throws for one
 * entity fails that entity only. The others of the same discovery batch, and entities created later, run; the failed
 * one is registered as a FAILED projection with the factory's error, logged, and tried again by its start. Waits are
 * bounded by {@link #BOUND}.
 */
class FanOutDiscoveryTest {

	private static final Duration BOUND = Duration.ofSeconds(10);

	private static final Duration DISCOVERY = Duration.ofMillis(50);

	private final InMemoryJournal journal = new InMemoryJournal();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal)
		.readJournal(this.journal.readJournal())
		.offsetStore(new InMemoryOffsetStore())
		.build();

	private final JournalLogs logs = JournalLogs.capture();

	@AfterEach
	void close() {
		this.engine.close();
		this.logs.close();
	}

	private void append(String persistenceId, long expected, String... payloads) {
		List<EventToAppend> events = Arrays.stream(payloads).map((p) -> EventToAppend.of(p)).toList();
		result(this.journal.append(persistenceId, expected, events));
	}

	@Test
	void aHandlerFactoryThatThrowsForOneEntityFailsThatEntityOnly() {
		// Listed in this order (ids are sorted): the failing entity is second, three more follow it in the same batch.
		for (String id : List.of("e1", "e2", "e3", "e4", "e5")) {
			append(id, 0, id + "-1", id + "-2");
		}
		Map<String, List<String>> seen = new ConcurrentHashMap<>();
		AtomicBoolean factoryBroken = new AtomicBoolean(true);
		this.engine.fanOut("view", String.class, (id) -> {
			if (id.equals("e2") && factoryBroken.get()) {
				throw new IllegalStateException("no handler for e2 today");
			}
			return EventHandler.blocking((event) -> seen.computeIfAbsent(event.persistenceId(),
					(k) -> new CopyOnWriteArrayList<>()).add(event.payload().replace("\"", "")));
		}, ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20)), DISCOVERY);

		await("the other entities of the batch handled").atMost(BOUND).until(() -> List.of("e1", "e3", "e4", "e5")
			.stream().allMatch((id) -> seen.getOrDefault(id, List.of()).size() == 2));
		append("e6", 0, "e6-1");
		await("an entity created later handled").atMost(BOUND)
			.until(() -> seen.getOrDefault("e6", List.of()).size() == 1);

		assertThat(seen).doesNotContainKey("e2");
		ProjectionControl failed = this.engine.projection("view-e2").orElseThrow();
		assertThat(failed.id()).isEqualTo(ProjectionId.byPersistenceId("view-e2", "e2"));
		assertThat(failed.status().state()).isEqualTo(ProjectionState.FAILED);
		assertThat(failed.status().lastError()).contains("no handler for e2 today");
		assertThat(this.logs.about("e2", Level.ERROR)).as("the failing entity is logged by name").isNotEmpty();
		assertThat(this.logs.about("listing persistenceIds failed", Level.WARN))
			.as("one entity's failure is not a failure of the listing").isEmpty();

		// Started again (as startAll does), it creates the handler again: once the factory works, the entity runs.
		factoryBroken.set(false);
		result(failed.start());
		await("the failed entity handled once started again").atMost(BOUND)
			.until(() -> seen.getOrDefault("e2", List.of()).size() == 2);
		assertThat(this.engine.projection("view-e2").orElseThrow().status().state()).isEqualTo(ProjectionState.RUNNING);
		assertThat(seen.get("e2")).containsExactly("e2-1", "e2-2");
	}

}
