package io.cassandrajournal.spring.boot.actuate;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.InMemoryOffsetStore;
import io.cassandrajournal.projection.OffsetStore;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionHandler;
import io.cassandrajournal.projection.ProjectionId;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionState;
import io.cassandrajournal.projection.ResetInProgressException;
import io.cassandrajournal.query.TagOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Over HTTP, a reset refused because another reset of the projection runs is 409 Conflict with a body saying so,
 * and the running reset goes on; a bad request stays the endpoint's 400, an unknown projection 404, and a real
 * failure is thrown as before (500). The first reset is held by a handler that does not end its event until let go:
 * a reset stops the projection first, and the stop waits for the event in hand.
 */
class ProjectionsEndpointWebExtensionTest {

	private final InMemoryJournal journal = new InMemoryJournal();

	/** A reset to the start fails while its {@code resetFails} is set: a real failure, not a refusal. */
	private final FailingResets offsets = new FailingResets();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal).offsetStore(this.offsets).build();

	private final ProjectionsEndpoint endpoint = new ProjectionsEndpoint(this.engine);

	private final ProjectionsEndpointWebExtension extension = new ProjectionsEndpointWebExtension(this.endpoint);

	private final List<Long> handled = new CopyOnWriteArrayList<>();

	/** While not null, the handler waits for it (at most 30 s) before it takes an event. */
	private volatile CountDownLatch gate;

	private final List<Long> waiting = new CopyOnWriteArrayList<>();

	private ProjectionControl control;

	@BeforeEach
	void start() throws Exception {
		append(0, "one", "two");
		this.control = this.engine.register(Projection.byPersistenceId("by-pid", "acct-1", String.class,
				ProjectionHandler.blocking((event) -> {
					CountDownLatch held = this.gate;
					if (held != null) {
						this.waiting.add(event.sequenceNr());
						held.await(30, TimeUnit.SECONDS);
					}
					this.handled.add(event.sequenceNr());
				}), ProjectionSettings.defaults()));
		this.control.start().toCompletableFuture().get(10, TimeUnit.SECONDS);
		// Bound: the in-memory journal delivers at once; 10 s allows for a slow machine.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.control.status().offset().sequenceNr() == 2);
	}

	@AfterEach
	void close() {
		CountDownLatch held = this.gate;
		if (held != null) {
			held.countDown();
		}
		this.engine.close();
	}

	private void append(long expected, String... payloads) throws Exception {
		this.journal.append("acct-1", expected, java.util.Arrays.stream(payloads).map(EventToAppend::of).toList())
			.toCompletableFuture()
			.get(10, TimeUnit.SECONDS);
	}

	/** @return a reset of the projection that stays in progress until the gate opens */
	private CompletableFuture<Void> heldReset() throws Exception {
		this.gate = new CountDownLatch(1);
		append(2, "three");
		await().atMost(Duration.ofSeconds(10)).until(() -> this.waiting.contains(3L));
		CompletableFuture<Void> first = this.control.reset(TagOffset.START).toCompletableFuture();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.control.status().state() == ProjectionState.STOPPED);
		assertThat(first).isNotDone();
		return first;
	}

	@Test
	void aResetWhileAnotherRunsIsAConflictSayingSoAndTheRunningResetGoesOn() throws Exception {
		CompletableFuture<Void> first = heldReset();

		WebEndpointResponse<Map<String, Object>> refused = this.extension.control("by-pid", "reset", null, 1L);

		assertThat(refused.getStatus()).isEqualTo(409);
		assertThat(refused.getBody()).containsEntry("error", "reset in progress");
		assertThat((String) refused.getBody().get("message")).contains("'by-pid'", "refused",
				"another reset of it is in progress and goes on");
		assertThat(first).isNotDone();
		this.gate.countDown();
		first.get(10, TimeUnit.SECONDS);
		// The running reset (from the start), not the refused one (from 1), decided: everything is handled again.
		await().atMost(Duration.ofSeconds(10)).until(() -> this.handled.size() == 6);
		assertThat(this.handled).containsExactly(1L, 2L, 3L, 1L, 2L, 3L);
		assertThat(this.control.status().state()).isEqualTo(ProjectionState.RUNNING);
	}

	@Test
	void withoutTheExtensionTheRefusalIsTheCoreExceptionItselfAnIllegalStateException() throws Exception {
		CompletableFuture<Void> first = heldReset();

		// What JMX and a Java caller of the endpoint see: still an IllegalStateException, now telling what it is.
		assertThatExceptionOfType(ResetInProgressException.class)
			.isThrownBy(() -> this.endpoint.control("by-pid", "reset", null, null))
			.isInstanceOf(IllegalStateException.class)
			.withMessageContaining("being reset already");
		this.gate.countDown();
		first.get(10, TimeUnit.SECONDS);
	}

	@Test
	void badRequestsStay400AndAnUnknownProjectionIs404AndAnAcceptedActionIs200() {
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.extension.control("by-pid", "reset", 1_700_000_000_000L, null))
			.satisfies((ex) -> assertThat(ex.getReason()).contains("fromSequenceNr"));
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.extension.control("by-pid", "rewind", null, null))
			.satisfies((ex) -> assertThat(ex.getReason()).contains("Unknown action 'rewind'"));
		assertThat(this.extension.control("nope", "reset", null, null).getStatus()).isEqualTo(404);
		WebEndpointResponse<Map<String, Object>> paused = this.extension.control("by-pid", "pause", null, null);
		assertThat(paused.getStatus()).isEqualTo(200);
		@SuppressWarnings("unchecked")
		Map<String, Object> status = (Map<String, Object>) paused.getBody().get("status");
		assertThat(status).containsEntry("state", "PAUSED");
	}

	@Test
	void aResetThatReallyFailsIsStillThrownForA500NotAConflict() {
		this.offsets.resetFails = true;
		assertThatExceptionOfType(IllegalStateException.class)
			.isThrownBy(() -> this.extension.control("by-pid", "reset", null, null))
			.isNotInstanceOf(ResetInProgressException.class)
			.withMessageContaining("offset table unavailable");
	}

	/** An in-memory store whose reset to the start (a delete) can be made to fail. */
	private static final class FailingResets implements OffsetStore {

		private final InMemoryOffsetStore store = new InMemoryOffsetStore();

		volatile boolean resetFails;

		@Override
		public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
			return this.store.load(id);
		}

		@Override
		public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
			return this.store.save(id, offset);
		}

		/** A reset to the start deletes the cursor: fails while {@link #resetFails} is set. */
		@Override
		public CompletionStage<Void> delete(ProjectionId id) {
			return this.resetFails ? CompletableFuture.failedFuture(new IllegalStateException("offset table unavailable"))
					: this.store.delete(id);
		}

	}

}
