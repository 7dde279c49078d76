package io.cassandrajournal.sample;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

import io.cassandrajournal.journal.JournalConcurrencyException;

/**
 * Maps business and input errors onto RFC 9457 problem details; never a 500 for a bad request.
 */
@RestControllerAdvice
public class ProblemHandler extends ResponseEntityExceptionHandler {

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
