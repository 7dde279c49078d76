package io.cassandrajournal.sample.load;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;

import io.cassandrajournal.sample.AccountExceptions;
import io.cassandrajournal.sample.AccountService;

/**
 * One background run of the {@link LoadGenerator}: its counters are read while it runs.
 */
public final class LoadRun {

	/** What a run is doing. */
	public enum State {

		/** Opening the accounts. */
		OPENING,

		/** Running the operations. */
		RUNNING,

		/** Every operation was made (some may have been rejected or failed: see the counters). */
		COMPLETED,

		/** The run stopped early (the application is shutting down). */
		ABORTED

	}

	/**
	 * @param state what the run is doing
	 * @param accounts accounts used
	 * @param operations operations asked for
	 * @param concurrency clients at once
	 * @param completed operations made so far (accepted, rejected or failed)
	 * @param rejected withdrawals rejected for insufficient funds
	 * @param failed operations that failed otherwise (for example while Cassandra was unavailable)
	 * @param startedAt when the run started
	 * @param millis how long it has run
	 * @param operationsPerSecond throughput so far
	 */
	public record Status(State state, int accounts, int operations, int concurrency, long completed, long rejected, long failed,
			Instant startedAt, long millis, double operationsPerSecond) {
	}

	private final LoadGenerator.LoadRequest request;

	private final AtomicLong remaining;

	private final AtomicLong completed = new AtomicLong();

	private final AtomicLong rejected = new AtomicLong();

	private final AtomicLong failed = new AtomicLong();

	private final Instant startedAt = Instant.now();

	private final long startedNanos = System.nanoTime();

	private volatile State state = State.OPENING;

	private volatile long finishedNanos;

	LoadRun(LoadGenerator.LoadRequest request) {
		this.request = request;
		this.remaining = new AtomicLong(request.operations());
	}

	boolean finished() {
		return this.state == State.COMPLETED || this.state == State.ABORTED;
	}

	void start(AccountService accounts, Executor executor, Logger logger) {
		CompletableFuture.runAsync(() -> open(accounts), executor).thenCompose((opened) -> {
			this.state = State.RUNNING;
			List<CompletableFuture<Void>> clients = new ArrayList<>();
			for (int c = 0; c < this.request.concurrency(); c++) {
				clients.add(CompletableFuture.runAsync(() -> client(accounts, logger), executor));
			}
			return CompletableFuture.allOf(clients.toArray(CompletableFuture[]::new));
		}).whenComplete((ok, error) -> {
			this.finishedNanos = System.nanoTime();
			this.state = (error == null) ? State.COMPLETED : State.ABORTED;
			if (error != null) {
				logger.warn("Load run stopped early after {} operations: {}", this.completed.get(), error.toString());
			}
			else {
				logger.info("Load run completed: {}", status());
			}
		});
	}

	private void open(AccountService accounts) {
		for (int i = 0; i < this.request.accounts(); i++) {
			try {
				accounts.open("load-" + i);
			}
			catch (AccountExceptions.AlreadyExists ex) {
				// reused from an earlier run
			}
		}
	}

	private void client(AccountService accounts, Logger logger) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		while (this.remaining.getAndDecrement() > 0 && !Thread.currentThread().isInterrupted()) {
			String id = "load-" + random.nextInt(this.request.accounts());
			long amount = 1 + random.nextInt(100);
			try {
				if (random.nextBoolean()) {
					accounts.deposit(id, amount);
				}
				else {
					accounts.withdraw(id, amount);
				}
			}
			catch (RuntimeException ex) {
				if (ex instanceof AccountExceptions.InsufficientFunds) {
					this.rejected.incrementAndGet();
				}
				else if (this.failed.incrementAndGet() == 1) {
					// The first one says why; later ones are only counted (the status shows how many).
					logger.warn("Load run: a command on {} failed: {}", id, ex.toString());
				}
			}
			this.completed.incrementAndGet();
		}
	}

	Status status() {
		long end = finished() ? this.finishedNanos : System.nanoTime();
		long millis = Math.max(0, (end - this.startedNanos) / 1_000_000);
		long done = this.completed.get();
		return new Status(this.state, this.request.accounts(), this.request.operations(), this.request.concurrency(), done,
				this.rejected.get(), this.failed.get(), this.startedAt, millis, done * 1000.0 / Math.max(1, millis));
	}

}
