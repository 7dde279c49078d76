package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.query.TagOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A segment's runner published (taken) while its control is paused is paused by the taking thread; a resume() in
 * between must not be undone by it. Without a node: a control over one segment and a runner whose pause waits on a
 * latch, so that the resume runs inside the window. Waits are bounded by {@link #BOUND}.
 */
class SegmentPauseTest {

	private static final Duration BOUND = Duration.ofSeconds(10);

	@Test
	void aResumeWhileASegmentIsTakenIsNotUndoneByTheTake() throws Exception {
		Control control = new Control();
		control.pause();
		GatedRunner runner = new GatedRunner();
		SegmentedProjection.Segment segment = control.segments().get(0);

		Thread take = new Thread(() -> control.publish(segment, runner, () -> {
		}), "take");
		take.start();
		assertThat(runner.pausing.await(BOUND.toMillis(), TimeUnit.MILLISECONDS)).as("the take pauses the runner")
			.isTrue();
		// The user's resume while the take is between its read of the pause flag and the runner's pause.
		Thread resume = new Thread(control::resume, "resume");
		resume.start();
		await("the resume ran or waits for the take").atMost(BOUND)
			.until(() -> !resume.isAlive() || resume.getState() == Thread.State.BLOCKED
					|| resume.getState() == Thread.State.WAITING);
		runner.proceed.countDown();
		take.join(BOUND.toMillis());
		resume.join(BOUND.toMillis());

		assertThat(take.isAlive()).isFalse();
		assertThat(resume.isAlive()).isFalse();
		assertThat(runner.paused).as("the control was resumed: its new runner runs").isFalse();
	}

	/** A control over one segment, without sharing, that only publishes runners. */
	private static final class Control extends AbstractSegmentedControl {

		Control() {
			super(new ProjectionId("paused", "tag"), "paused",
					split(1, (range) -> new ProjectionId("paused", "tag").segment(range)), null, false, null);
		}

		@Override
		SegmentRunner take(SegmentedProjection.Segment segment, BooleanSupplier mayGoOn, OffsetStore cursor) {
			throw new UnsupportedOperationException();
		}

		@Override
		public CompletionStage<Void> start() {
			return CompletableFuture.completedFuture(null);
		}

		@Override
		public CompletionStage<Void> stop() {
			return CompletableFuture.completedFuture(null);
		}

		@Override
		public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
			return CompletableFuture.completedFuture(List.of());
		}

		@Override
		public void wake(AppendResult result) {
		}

	}

	/** A runner whose pause, once entered, waits for {@link #proceed} before it takes effect. */
	private static final class GatedRunner implements SegmentRunner {

		final CountDownLatch pausing = new CountDownLatch(1);

		final CountDownLatch proceed = new CountDownLatch(1);

		volatile boolean paused;

		@Override
		public void pause() {
			this.pausing.countDown();
			try {
				this.proceed.await(BOUND.toMillis(), TimeUnit.MILLISECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			this.paused = true;
		}

		@Override
		public void resume() {
			this.paused = false;
		}

		@Override
		public ProjectionId id() {
			return new ProjectionId("paused", "tag");
		}

		@Override
		public ProjectionStatus status() {
			return new ProjectionStatus(id(), this.paused ? ProjectionState.PAUSED : ProjectionState.RUNNING,
					TagOffset.START, 0, 0, null, Duration.ZERO, 0, null);
		}

		@Override
		public CompletionStage<Void> start() {
			return CompletableFuture.completedFuture(null);
		}

		@Override
		public CompletionStage<Void> stop() {
			return CompletableFuture.completedFuture(null);
		}

		@Override
		public CompletionStage<Void> retire() {
			return stop();
		}

		@Override
		public CompletionStage<Void> reset(TagOffset offset) {
			return CompletableFuture.completedFuture(null);
		}

		@Override
		public void skipCurrent() {
		}

		@Override
		public CompletionStage<List<DeadLetter>> deadLetters(int limit) {
			return CompletableFuture.completedFuture(List.of());
		}

		@Override
		public CompletionStage<Integer> redeliverDeadLetters() {
			return CompletableFuture.completedFuture(0);
		}

		@Override
		public void wake(AppendResult result) {
		}

	}

}
