package io.cassandrajournal.sample.load;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

import io.cassandrajournal.sample.AccountExceptions;
import io.cassandrajournal.sample.AccountService;

/**
 * Drives many accounts concurrently through the same commands as the REST API, so the journal and
 * projection meters move: {@code POST /load} with {@code {"accounts": 50, "operations": 5000, "concurrency": 8}}.
 */
@RestController
public class LoadGenerator {

	private final AccountService accounts;

	public LoadGenerator(AccountService accounts) {
		this.accounts = accounts;
	}

	/**
	 * @param accounts how many accounts ({@code load-0} .. {@code load-n}), opened if needed
	 * @param operations how many random deposits and withdrawals
	 * @param concurrency how many clients at once
	 */
	public record LoadRequest(int accounts, int operations, int concurrency) {
	}

	/**
	 * @param operations operations run
	 * @param rejected withdrawals rejected for insufficient funds
	 * @param millis how long it took
	 * @param operationsPerSecond throughput
	 */
	public record LoadResult(long operations, long rejected, long millis, double operationsPerSecond) {
	}

	@PostMapping("/load")
	@ResponseStatus(HttpStatus.OK)
	public LoadResult run(@RequestBody LoadRequest request) throws Exception {
		if (request.accounts() < 1 || request.operations() < 1 || request.concurrency() < 1 || request.concurrency() > 64
				|| request.operations() > 1_000_000) {
			throw new IllegalArgumentException("accounts and operations must be positive (operations at most 1,000,000), "
					+ "concurrency between 1 and 64");
		}
		for (int i = 0; i < request.accounts(); i++) {
			try {
				this.accounts.open("load-" + i);
			}
			catch (AccountExceptions.AlreadyExists ex) {
				// reused from an earlier run
			}
		}
		AtomicLong remaining = new AtomicLong(request.operations());
		AtomicLong rejected = new AtomicLong();
		long started = System.nanoTime();
		ExecutorService clients = Executors.newFixedThreadPool(request.concurrency());
		try {
			List<Future<?>> running = new ArrayList<>();
			for (int c = 0; c < request.concurrency(); c++) {
				running.add(clients.submit(() -> {
					ThreadLocalRandom random = ThreadLocalRandom.current();
					while (remaining.getAndDecrement() > 0) {
						String id = "load-" + random.nextInt(request.accounts());
						long amount = 1 + random.nextInt(100);
						try {
							if (random.nextBoolean()) {
								this.accounts.deposit(id, amount);
							}
							else {
								this.accounts.withdraw(id, amount);
							}
						}
						catch (AccountExceptions.InsufficientFunds ex) {
							rejected.incrementAndGet();
						}
					}
					return null;
				}));
			}
			for (Future<?> client : running) {
				client.get();
			}
		}
		finally {
			clients.shutdown();
		}
		Duration took = Duration.ofNanos(System.nanoTime() - started);
		return new LoadResult(request.operations(), rejected.get(), took.toMillis(),
				request.operations() * 1000.0 / Math.max(1, took.toMillis()));
	}

}
