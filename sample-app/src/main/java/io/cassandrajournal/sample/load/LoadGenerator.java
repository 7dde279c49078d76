package io.cassandrajournal.sample.load;

import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.annotation.PreDestroy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

import io.cassandrajournal.sample.AccountService;

/**
 * Drives many accounts concurrently through the same commands as the REST API, so the journal and projection
 * meters move: {@code POST /load} with {@code {"accounts": 50, "operations": 5000, "concurrency": 8}} starts a run
 * in the background (202, one run at a time) and {@code GET /load} shows its progress.
 * <p>
 * Every run is bounded ({@link #MAX_ACCOUNTS}, {@link #MAX_OPERATIONS}, {@link #MAX_CONCURRENCY}) and runs on one
 * executor shared by all runs, so a request can neither start unbounded work nor a thread pool of its own.
 */
@RestController
public class LoadGenerator {

	/** The most accounts one run opens and uses. */
	public static final int MAX_ACCOUNTS = 10_000;

	/** The most operations one run makes. */
	public static final int MAX_OPERATIONS = 1_000_000;

	/** The most concurrent clients of one run, and the size of the shared executor. */
	public static final int MAX_CONCURRENCY = 64;

	private static final Logger logger = LoggerFactory.getLogger(LoadGenerator.class);

	private final AccountService accounts;

	private final ExecutorService clients;

	private final AtomicReference<LoadRun> current = new AtomicReference<>();

	public LoadGenerator(AccountService accounts) {
		this.accounts = accounts;
		AtomicInteger threads = new AtomicInteger();
		this.clients = Executors.newFixedThreadPool(MAX_CONCURRENCY, (task) -> {
			Thread thread = new Thread(task, "load-client-" + threads.incrementAndGet());
			thread.setDaemon(true);
			return thread;
		});
	}

	/**
	 * @param accounts how many accounts ({@code load-0} .. {@code load-n}), opened if needed
	 * @param operations how many random deposits and withdrawals
	 * @param concurrency how many clients at once
	 */
	public record LoadRequest(int accounts, int operations, int concurrency) {

		void validate() {
			if (this.accounts < 1 || this.accounts > MAX_ACCOUNTS) {
				throw new IllegalArgumentException("accounts must be between 1 and " + MAX_ACCOUNTS + ", was " + this.accounts);
			}
			if (this.operations < 1 || this.operations > MAX_OPERATIONS) {
				throw new IllegalArgumentException(
						"operations must be between 1 and " + MAX_OPERATIONS + ", was " + this.operations);
			}
			if (this.concurrency < 1 || this.concurrency > MAX_CONCURRENCY) {
				throw new IllegalArgumentException(
						"concurrency must be between 1 and " + MAX_CONCURRENCY + ", was " + this.concurrency);
			}
		}

	}

	/** Another run is still going (409). */
	public static class RunInProgress extends RuntimeException {

		private static final long serialVersionUID = 1L;

		RunInProgress() {
			super("A load run is in progress; GET /load shows it, start the next one when it has finished");
		}

	}

	/**
	 * Starts a run in the background.
	 * @param request the run's size
	 * @return 202 with the run's status; 400 for sizes out of bounds, 409 while another run is in progress
	 */
	@PostMapping("/load")
	public ResponseEntity<LoadRun.Status> start(@RequestBody LoadRequest request) {
		request.validate();
		LoadRun run = new LoadRun(request);
		LoadRun previous = this.current.get();
		if ((previous != null && !previous.finished()) || !this.current.compareAndSet(previous, run)) {
			throw new RunInProgress();
		}
		run.start(this.accounts, this.clients, logger);
		return ResponseEntity.accepted().location(URI.create("/load")).body(run.status());
	}

	/** @return the running or last run's progress; 404 before the first run */
	@GetMapping("/load")
	public ResponseEntity<LoadRun.Status> status() {
		LoadRun run = this.current.get();
		return (run != null) ? ResponseEntity.ok(run.status()) : ResponseEntity.status(HttpStatus.NOT_FOUND).build();
	}

	@PreDestroy
	void stop() {
		this.clients.shutdownNow();
	}

}
