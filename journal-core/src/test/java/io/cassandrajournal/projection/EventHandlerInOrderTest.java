package io.cassandrajournal.projection;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.journal.PersistentEvent;

import static org.assertj.core.api.Assertions.assertThat;

/** The one loop over the parts of a split event, shared by the runner and the starter's annotated handlers. */
class EventHandlerInOrderTest {

	private static List<PersistentEvent<String>> parts(String... payloads) {
		List<PersistentEvent<String>> parts = new ArrayList<>();
		for (String payload : payloads) {
			parts.add(new PersistentEvent<>("p", 7, Instant.EPOCH, Set.of(), payload));
		}
		return parts;
	}

	@Test
	void eachPartStartsAfterThePreviousOneCompleted() {
		List<String> handled = new ArrayList<>();
		CompletableFuture<Void> first = new CompletableFuture<>();
		CompletionStage<Void> all = EventHandler.inOrder(parts("a", "b"), (part) -> {
			handled.add(part.payload());
			return part.payload().equals("a") ? first : null;
		});
		assertThat(handled).as("b waits for a's stage").containsExactly("a");
		first.complete(null);
		assertThat(handled).containsExactly("a", "b");
		assertThat(all.toCompletableFuture()).isCompleted();
	}

	@Test
	void theFirstFailureEndsItThrownOrAsAStage() {
		List<String> handled = new ArrayList<>();
		CompletionStage<Void> thrown = EventHandler.inOrder(parts("a", "b"), (part) -> {
			handled.add(part.payload());
			throw new IllegalStateException("no " + part.payload());
		});
		assertThat(thrown.toCompletableFuture()).isCompletedExceptionally();
		assertThat(handled).containsExactly("a");
		CompletionStage<Void> failed = EventHandler.inOrder(parts("x"),
				(part) -> CompletableFuture.failedFuture(new IllegalStateException("no")));
		assertThat(failed.toCompletableFuture()).isCompletedExceptionally();
	}

}
