package io.cassandrajournal.sample;

import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

import io.cassandrajournal.JournalUnavailableException;
import io.cassandrajournal.journal.JournalConcurrencyException;
import io.cassandrajournal.journal.JournalWriteUncertainException;
import io.cassandrajournal.sample.load.LoadGenerator;

/**
 * Maps business and input errors onto RFC 9457 problem details; never a 500 for a bad request.
 */
@RestControllerAdvice
public class ProblemHandler extends ResponseEntityExceptionHandler {

	private static final Logger outageLogger = LoggerFactory.getLogger(ProblemHandler.class);

	private static final long OUTAGE_LOG_INTERVAL_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

	private final AtomicLong lastOutageLog = new AtomicLong();

	@ExceptionHandler(AccountExceptions.NotFound.class)
	ProblemDetail notFound(AccountExceptions.NotFound ex) {
		return problem(HttpStatus.NOT_FOUND, "Unknown account", ex.getMessage());
	}

	@ExceptionHandler(AccountExceptions.AlreadyExists.class)
	ProblemDetail exists(AccountExceptions.AlreadyExists ex) {
		return problem(HttpStatus.CONFLICT, "Account exists", ex.getMessage());
	}

	@ExceptionHandler(AccountExceptions.InsufficientFunds.class)
	ProblemDetail insufficient(AccountExceptions.InsufficientFunds ex) {
		return problem(HttpStatus.UNPROCESSABLE_CONTENT, "Insufficient funds", ex.getMessage());
	}

	@ExceptionHandler(AccountExceptions.InvalidAmount.class)
	ProblemDetail invalidAmount(AccountExceptions.InvalidAmount ex) {
		return problem(HttpStatus.UNPROCESSABLE_CONTENT, "Invalid amount", ex.getMessage());
	}

	@ExceptionHandler(AccountExceptions.BalanceLimit.class)
	ProblemDetail balanceLimit(AccountExceptions.BalanceLimit ex) {
		return problem(HttpStatus.UNPROCESSABLE_CONTENT, "Balance limit", ex.getMessage());
	}

	@ExceptionHandler(LoadGenerator.RunInProgress.class)
	ProblemDetail loadRunning(LoadGenerator.RunInProgress ex) {
		return problem(HttpStatus.CONFLICT, "Load run in progress", ex.getMessage());
	}

	/**
	 * Cassandra cannot be reached (a node outage, a restart): an expected, temporary condition. 503 with
	 * {@code Retry-After}, logged at WARN at most every 30 s without a stack trace.
	 */
	@ExceptionHandler(JournalUnavailableException.class)
	ResponseEntity<ProblemDetail> unavailable(JournalUnavailableException ex) {
		long now = System.nanoTime();
		long last = this.lastOutageLog.get();
		if ((last == 0 || now - last > OUTAGE_LOG_INTERVAL_NANOS) && this.lastOutageLog.compareAndSet(last, now)) {
			outageLogger.warn("The journal is unavailable; answering 503 (logged at most every 30 s): {}", ex.getMessage());
		}
		String detail = (ex instanceof JournalWriteUncertainException)
				? "The journal lost contact with Cassandra during this command: it may or may not have been applied. "
						+ "Read the account before you retry."
				: "The journal cannot reach Cassandra right now; nothing was changed. Retry in a few seconds.";
		return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
			.header(HttpHeaders.RETRY_AFTER, "5")
			.body(problem(HttpStatus.SERVICE_UNAVAILABLE, "Journal unavailable", detail));
	}

	@ExceptionHandler(IllegalArgumentException.class)
	ProblemDetail badInput(IllegalArgumentException ex) {
		return problem(HttpStatus.BAD_REQUEST, "Invalid request", ex.getMessage());
	}

	@ExceptionHandler(JournalConcurrencyException.class)
	ProblemDetail conflict(JournalConcurrencyException ex) {
		return problem(HttpStatus.CONFLICT, "Concurrent update", ex.getMessage());
	}

	private static ProblemDetail problem(HttpStatus status, String title, String detail) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
		problem.setTitle(title);
		return problem;
	}

}
