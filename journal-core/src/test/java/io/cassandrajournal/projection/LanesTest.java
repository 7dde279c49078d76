package io.cassandrajournal.projection;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.journal.PersistentEvent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link Lanes} on plain lists of events, with a step that completes, holds or fails an event on demand: no
 * Cassandra, no runner. With {@code concurrency 2}, persistenceId {@code "a"} runs in lane 1 and {@code "b"}
 * in lane 0. Every stage that is awaited is complete by then (the lanes run on a direct executor), so
 * nothing waits.
 */
class LanesTest {

	private final ExecutorService pool = Executors.newFixedThreadPool(2);

	private final List<String> handled = new CopyOnWriteArrayList<>();

	/** Events held by the step until the test completes them. */
	private final Map<String, CompletableFuture<Void>> held = new ConcurrentHashMap<>();

	private final Set<String> failing = ConcurrentHashMap.newKeySet();

	@AfterEach
	void close() {
		this.pool.shutdownNow();
	}

	private static PersistentEvent<String> event(String persistenceId, long sequenceNr) {
		return new PersistentEvent<>(persistenceId, sequenceNr, Instant.ofEpochMilli(sequenceNr), Set.of(), "\"x\"");
	}

	private static String key(PersistentEvent<?> event) {
		return event.persistenceId() + event.sequenceNr();
	}

	private CompletionStage<Void> step(PersistentEvent<String> event) {
		String key = key(event);
		if (this.failing.contains(key)) {
			return CompletableFuture.failedFuture(new IllegalStateException("handler failed on " + key));
		}
		CompletableFuture<Void> hold = this.held.get(key);
		if (hold != null) {
			return hold.thenRun(() -> this.handled.add(key));
		}
		this.handled.add(key);
		return CompletableFuture.completedFuture(null);
	}

	@Test
	void oneLaneHandlesTheEventsInOrderAndCountsThemAll() {
		List<PersistentEvent<String>> events = List.of(event("a", 1), event("b", 1), event("a", 2));
		Lanes lanes = new Lanes(events, this::step, () -> true);

		assertThat(lanes.run(1, Runnable::run).toCompletableFuture()).isCompleted();

		assertThat(this.handled).containsExactly("a1", "b1", "a2");
		assertThat(lanes.handled()).isEqualTo(3);
	}

	@Test
	void anEntitysEventsStayInOneLane() {
		assertThat(Lanes.lane("a", 2)).isEqualTo(1);
		assertThat(Lanes.lane("b", 2)).isEqualTo(0);
		assertThat(Lanes.lane("a", 2)).isEqualTo(Lanes.lane("a", 2));
	}

	@Test
	void theHandledPrefixNeverPassesAnEventAnotherLaneHasNotFinished() {
		List<PersistentEvent<String>> events = List.of(event("a", 1), event("b", 1), event("a", 2), event("b", 2));
		CompletableFuture<Void> b1 = new CompletableFuture<>();
		this.held.put("b1", b1);
		Lanes lanes = new Lanes(events, this::step, () -> true);

		CompletableFuture<Void> run = lanes.run(2, Runnable::run).toCompletableFuture();

		assertThat(this.handled).containsExactly("a1", "a2");
		assertThat(lanes.handled()).as("b1 (index 1) holds the prefix").isEqualTo(1);
		assertThat(run).isNotDone();

		b1.complete(null);

		assertThat(run).isCompleted();
		assertThat(this.handled).containsExactly("a1", "a2", "b1", "b2");
		assertThat(lanes.handled()).isEqualTo(4);
	}

	@Test
	void aFailureEndsItsLaneOnlyAndTheBatchFails() {
		List<PersistentEvent<String>> events = List.of(event("a", 1), event("b", 1), event("a", 2), event("b", 2));
		this.failing.add("a1");
		Lanes lanes = new Lanes(events, this::step, () -> true);

		CompletableFuture<Void> run = lanes.run(2, Runnable::run).toCompletableFuture();

		assertThat(this.handled).as("lane a ends at a1; lane b goes on").containsExactly("b1", "b2");
		assertThat(lanes.handled()).as("a1 was not handled").isZero();
		assertThatThrownBy(run::join).hasRootCauseMessage("handler failed on a1");
	}

	@Test
	void aStoppedBatchTakesNoFurtherEvent() {
		List<PersistentEvent<String>> events = List.of(event("a", 1), event("a", 2), event("a", 3));
		AtomicBoolean goesOn = new AtomicBoolean(true);
		CompletableFuture<Void> a2 = new CompletableFuture<>();
		this.held.put("a2", a2);
		Lanes lanes = new Lanes(events, this::step, goesOn::get);

		CompletableFuture<Void> run = lanes.run(1, Runnable::run).toCompletableFuture();
		goesOn.set(false);
		a2.complete(null);

		assertThat(run).isCompleted();
		assertThat(this.handled).containsExactly("a1", "a2");
		assertThat(lanes.handled()).isEqualTo(2);
	}

	@Test
	void lanesRunOnTheirOwnThreads() {
		List<PersistentEvent<String>> events = List.of(event("a", 1), event("b", 1));
		Set<String> threads = ConcurrentHashMap.newKeySet();
		Lanes lanes = new Lanes(events, (event) -> {
			threads.add(Thread.currentThread().getName());
			return CompletableFuture.completedFuture(null);
		}, () -> true);

		lanes.run(2, this.pool).toCompletableFuture().join();

		assertThat(lanes.handled()).isEqualTo(2);
		assertThat(threads).allMatch((name) -> name.startsWith("pool-"));
	}

}
