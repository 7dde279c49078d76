package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A pause or a resume that arrives while a reset is between its stop and its start is kept: the reset starts the
 * projection again in the state the last control call asked for (docs/reliability.md, finding 29, the last item
 * it left alone). The reset is held in the offset store's write of the new offset, the one step where the
 * projection is STOPPED, so the call lands in that window every run.
 */
class ProjectionResetControlTest {

	private static final Duration BOUND = Duration.ofSeconds(10);

	private final InMemoryJournal journal = new InMemoryJournal();

	private final HeldResets offsets = new HeldResets();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal).offsetStore(this.offsets).build();

	private final List<Long> handled = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() {
		this.offsets.release.complete(null);
		this.engine.close();
	}

	private ProjectionControl started() {
		result(this.journal.append("account-1", 0,
				List.of(EventToAppend.of(new Deposited(1)), EventToAppend.of(new Deposited(2)))));
		ProjectionControl control = this.engine.register(Projection.byPersistenceId("view", "account-1",
				AccountEvent.class, ProjectionHandler.blocking((event) -> this.handled.add(event.sequenceNr())),
				ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20))));
		result(control.start());
		await().atMost(BOUND).until(() -> this.handled.size() == 2);
		await().atMost(BOUND).until(() -> control.status().offset().sequenceNr() == 2);
		return control;
	}

	/** Starts a reset to the start and returns once it is held in the store, the projection stopped. */
	private CompletionStage<Void> heldReset(ProjectionControl control) throws InterruptedException {
		CompletionStage<Void> reset = control.reset(TagOffset.START);
		assertThat(this.offsets.resetting.await(BOUND.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
			.as("the reset reached the offset store").isTrue();
		assertThat(control.status().state()).as("stopped while the reset writes the offset")
			.isEqualTo(ProjectionState.STOPPED);
		return reset;
	}

	@Test
	void aPauseWhileTheResetWritesTheOffsetIsKept() throws Exception {
		ProjectionControl control = started();
		CompletionStage<Void> reset = heldReset(control);

		control.pause();
		this.offsets.release.complete(null);
		result(reset, BOUND);

		assertThat(control.status().state()).as("the pause asked for during the reset").isEqualTo(ProjectionState.PAUSED);
		control.resume();
		await("replayed from the reset's offset after the resume").atMost(BOUND).until(() -> this.handled.size() == 4);
		assertThat(this.handled).containsExactly(1L, 2L, 1L, 2L);
	}

	@Test
	void aResumeOfAPausedProjectionWhileTheResetWritesTheOffsetIsKept() throws Exception {
		ProjectionControl control = started();
		control.pause();
		CompletionStage<Void> reset = heldReset(control);

		control.resume();
		this.offsets.release.complete(null);
		result(reset, BOUND);

		assertThat(control.status().state()).as("the resume asked for during the reset").isEqualTo(ProjectionState.RUNNING);
		await("replayed from the reset's offset").atMost(BOUND).until(() -> this.handled.size() == 4);
		assertThat(this.handled).containsExactly(1L, 2L, 1L, 2L);
	}

	@Test
	void aResumeAndThenAPauseWhileTheResetWritesTheOffsetLeaveItPaused() throws Exception {
		ProjectionControl control = started();
		CompletionStage<Void> reset = heldReset(control);

		control.resume();
		control.pause();
		this.offsets.release.complete(null);
		result(reset, BOUND);

		assertThat(control.status().state()).as("the last call wins").isEqualTo(ProjectionState.PAUSED);
		control.resume();
		await().atMost(BOUND).until(() -> this.handled.size() == 4);
	}

	/** In-memory offsets whose {@code reset} waits for {@link #release} (loads and saves as they are). */
	private static final class HeldResets extends DelegatingOffsetStore {

		private final CountDownLatch resetting = new CountDownLatch(1);

		private final CompletableFuture<Void> release = new CompletableFuture<>();

		HeldResets() {
			super(new InMemoryOffsetStore());
		}

		@Override
		public CompletionStage<Void> reset(ProjectionId id, TagOffset to) {
			this.resetting.countDown();
			return this.release.thenComposeAsync((ignored) -> super.reset(id, to));
		}

	}

}
