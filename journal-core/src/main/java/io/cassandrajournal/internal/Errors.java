package io.cassandrajournal.internal;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;

import com.datastax.oss.driver.api.core.DriverException;

import io.cassandrajournal.JournalException;
import io.cassandrajournal.JournalUnavailableException;

/**
 * Turns driver failures into the journal's exceptions, with the operation and the persistenceId in the
 * message. Journal exceptions and programming errors pass through unchanged.
 */
public final class Errors {

	private Errors() {
	}

	/**
	 * The errors a loop or a user callback must let through: the JVM can no longer be trusted to go on. Every other
	 * throwable of one task (a StackOverflowError of a handler, a class that cannot be initialized) is that task's
	 * failure, so it never ends a scheduled loop or the tasks beside it.
	 * @param error a throwable
	 * @return whether it is an OutOfMemoryError, InternalError or UnknownError
	 */
	public static boolean fatal(Throwable error) {
		return error instanceof OutOfMemoryError || error instanceof InternalError || error instanceof UnknownError;
	}

	/**
	 * Throws the given throwable again if it is {@linkplain #fatal fatal}; for a catch of {@code Throwable} around a
	 * user callback whose other failures are logged and ignored.
	 * @param error a throwable just caught
	 */
	public static void rethrowIfFatal(Throwable error) {
		if (fatal(error)) {
			throw (Error) error;
		}
	}

	public static Throwable unwrap(Throwable error) {
		Throwable current = error;
		while ((current instanceof CompletionException || current instanceof ExecutionException)
				&& current.getCause() != null) {
			current = current.getCause();
		}
		return current;
	}

	public static RuntimeException translate(Throwable error, String operation, String subject) {
		Throwable cause = unwrap(error);
		if (cause instanceof JournalException journal) {
			return journal;
		}
		if (cause instanceof IllegalArgumentException || cause instanceof IllegalStateException) {
			return (RuntimeException) cause;
		}
		if (cause instanceof DriverException) {
			return new JournalUnavailableException(operation + " '" + subject + "' failed: " + cause.getMessage(),
					cause);
		}
		return new JournalException(operation + " '" + subject + "' failed: " + cause, cause);
	}

	public static <T> CompletionStage<T> failed(Throwable error) {
		return CompletableFuture.failedFuture(error);
	}

	/**
	 * @param <T> the stage's type
	 * @param stage a stage whose failure should be translated
	 * @param operation what was done, such as "Append to"
	 * @param subject the persistenceId or key
	 * @return a stage failing with translated exceptions
	 */
	public static <T> CompletionStage<T> translating(CompletionStage<T> stage, String operation, String subject) {
		return stage.handle((value, error) -> {
			if (error != null) {
				throw new CompletionException(translate(error, operation, subject));
			}
			return value;
		});
	}

}
