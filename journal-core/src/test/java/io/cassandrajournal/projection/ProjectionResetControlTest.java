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
 * A start, stop, pause or resume that arrives while a reset is between its stop and its start is kept: the reset
 * starts the projection again in the state the last control call asked for, or leaves it stopped (docs/reliability.md,
 * finding 29, items 7 and 9). The reset is held in the offset store's write of the new offset, the one step where the
 * projection is STOPPED, so the call lands in that window every run; the last case holds the reset's own start in
 * its load instead.
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
		this.offsets.loadReleased.complete(null);
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

	@Test
	void aStopWhileTheResetWritesTheOffsetKeepsItStopped() throws Exception {
		ProjectionControl control = started();
		CompletionStage<Void> reset = heldReset(control);

		CompletionStage<Void> stopped = control.stop();
		this.offsets.release.complete(null);
		result(reset, BOUND);
		result(stopped, BOUND);

		assertThat(control.status().state()).as("the stop asked for during the reset")
			.isEqualTo(ProjectionState.STOPPED);
		result(control.start(), BOUND);
		await("replayed from the reset's offset after the start").atMost(BOUND).until(() -> this.handled.size() == 4);
		assertThat(this.handled).containsExactly(1L, 2L, 1L, 2L);
	}

	@Test
	void aStopAndThenAStartWhileTheResetWritesTheOffsetLeaveItRunning() throws Exception {
		ProjectionControl control = started();
		CompletionStage<Void> reset = heldReset(control);

		control.stop();
		CompletionStage<Void> restarted = control.start();
		this.offsets.release.complete(null);
		result(reset, BOUND);
		result(restarted, BOUND);

		assertThat(control.status().state()).as("the last call wins").isEqualTo(ProjectionState.RUNNING);
		await("replayed from the reset's offset").atMost(BOUND).until(() -> this.handled.size() == 4);
	}

	@Test
	void aStartOfAPausedProjectionWhileTheResetWritesTheOffsetRunsIt() throws Exception {
		ProjectionControl control = started();
		control.pause();
		CompletionStage<Void> reset = heldReset(control);

		CompletionStage<Void> started = control.start();
		this.offsets.release.complete(null);
		result(reset, BOUND);
		result(started, BOUND);

		assertThat(control.status().state()).as("as a start of a paused projection does").isEqualTo(ProjectionState.RUNNING);
		await("replayed from the reset's offset").atMost(BOUND).until(() -> this.handled.size() == 4);
	}

	@Test
	void aStopAndThenAPauseWhileTheResetWritesTheOffsetLeaveItStopped() throws Exception {
		ProjectionControl control = started();
		CompletionStage<Void> reset = heldReset(control);

		control.stop();
		control.pause();
		control.resume();
		this.offsets.release.complete(null);
		result(reset, BOUND);

		assertThat(control.status().state()).as("a pause or resume of a stopped projection changes nothing")
			.isEqualTo(ProjectionState.STOPPED);
	}

	@Test
	void aStopAndAStartWhileTheResetsOwnStartLoadsLeaveItRunning() throws Exception {
		ProjectionControl control = started();
		this.offsets.holdNextLoad();
		CompletionStage<Void> reset = control.reset(TagOffset.START);
		this.offsets.release.complete(null);
		assertThat(this.offsets.loading.await(BOUND.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS))
			.as("the reset's start loads the offset").isTrue();

		control.stop();
		CompletionStage<Void> restarted = control.start();
		this.offsets.loadReleased.complete(null);
		result(reset, BOUND);
		result(restarted, BOUND);

		assertThat(control.status().state()).as("the start after the stop").isEqualTo(ProjectionState.RUNNING);
		await("replayed from the reset's offset").atMost(BOUND).until(() -> this.handled.size() == 4);
	}

	@Test
	void aRunnerRetiredWhileTheResetWritesTheOffsetIsNotStartedByIt() throws Exception {
		ProjectionControl control = started();
		CompletionStage<Void> reset = heldReset(control);

		CompletionStage<Void> retired = ((SegmentRunner) control).retire();
		this.offsets.release.complete(null);
		result(reset, BOUND);
		result(retired, BOUND);

		assertThat(control.status().state()).as("retired during the reset").isEqualTo(ProjectionState.STOPPED);
		assertThat(result(this.offsets.load(control.id()), BOUND)).as("the reset stored its offset").isEmpty();
	}

	@Test
	void aRunnerRetiredBeforeAResetIsNotStartedByIt() throws Exception {
		ProjectionControl control = started();
		this.offsets.release.complete(null);
		result(((SegmentRunner) control).retire(), BOUND);

		result(control.reset(TagOffset.START), BOUND);
		result(control.start(), BOUND);

		assertThat(control.status().state()).as("a retired runner (its segment handed over) stays stopped")
			.isEqualTo(ProjectionState.STOPPED);
		assertThat(result(this.offsets.load(control.id()), BOUND)).as("the reset stored its offset").isEmpty();
	}

	@Test
	void aResetWithNoCallDuringItLeavesTheProjectionRunning() throws Exception {
		ProjectionControl control = started();
		this.offsets.release.complete(null);

		result(control.reset(TagOffset.START), BOUND);

		assertThat(control.status().state()).isEqualTo(ProjectionState.RUNNING);
		await("replayed from the reset's offset").atMost(BOUND).until(() -> this.handled.size() == 4);
	}

	/**
	 * In-memory offsets whose {@code reset} waits for {@link #release}, and whose next load, once asked, waits for
	 * {@link #loadReleased} (saves as they are).
	 */
	private static final class HeldResets extends DelegatingOffsetStore {

		private final CountDownLatch resetting = new CountDownLatch(1);

		private final CompletableFuture<Void> release = new CompletableFuture<>();

		private final CountDownLatch loading = new CountDownLatch(1);

		private final CompletableFuture<Void> loadReleased = new CompletableFuture<>();

		private volatile boolean holdLoad;

		HeldResets() {
			super(new InMemoryOffsetStore());
		}

		/** The next load (the reset's own start's) waits for {@link #loadReleased}. */
		void holdNextLoad() {
			this.holdLoad = true;
		}

		@Override
		public CompletionStage<java.util.Optional<TagOffset>> load(ProjectionId id) {
			if (!this.holdLoad) {
				return super.load(id);
			}
			this.holdLoad = false;
			this.loading.countDown();
			return this.loadReleased.thenComposeAsync((ignored) -> super.load(id));
		}

		@Override
		public CompletionStage<Void> reset(ProjectionId id, TagOffset to) {
			this.resetting.countDown();
			return this.release.thenComposeAsync((ignored) -> super.reset(id, to));
		}

	}

}
