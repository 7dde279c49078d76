package io.cassandrajournal.spring.boot.inmemory;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Component;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.spring.boot.projection.ProjectionHandler;
import io.cassandrajournal.spring.boot.projection.TestEvents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A plain {@code @SpringBootTest} without Cassandra: the application's {@link InMemoryJournal} bean, the
 * starter's projection engine over its read side, and a tag projection declared with
 * {@code @ProjectionHandler} methods. No contact point is configured and no node is started
 * ({@code journal.cassandra.enabled=false}). Waits are bounded (10 s).
 */
@SpringBootTest(classes = InMemoryProjectionHandlerTest.App.class,
		properties = { "journal.cassandra.enabled=false", "journal.cassandra.projections.poll-interval=50ms",
			"management.health.cassandra.enabled=false" })
class InMemoryProjectionHandlerTest {

	@Autowired
	InMemoryJournal journal;

	@Autowired
	App.Views views;

	@Autowired
	ProjectionEngine engine;

	@Test
	void aTagProjectionDeclaredWithProjectionHandlerRunsOnTheInMemoryJournal() {
		this.journal.append("acct-1", 0, List.of(EventToAppend.of(new TestEvents.Deposited(5), "bank"),
				EventToAppend.of(new TestEvents.Withdrawn(2), "bank"))).toCompletableFuture().join();
		this.journal.append("acct-2", 0, List.of(EventToAppend.of(new TestEvents.Deposited(7), "other")))
			.toCompletableFuture()
			.join();
		this.journal.append("acct-2", 1, List.of(EventToAppend.of(new TestEvents.Deposited(9), "bank")))
			.toCompletableFuture()
			.join();

		await().atMost(Duration.ofSeconds(10)).until(() -> this.views.seen.size() == 3);

		assertThat(this.views.seen).containsExactly("acct-1#1+5", "-2", "acct-2#2+9");
		assertThat(this.engine.projection("bank-view")).isPresent();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class App {

		@Bean
		InMemoryJournal journal() {
			return new InMemoryJournal();
		}

		@Component
		static class Views {

			final List<String> seen = new CopyOnWriteArrayList<>();

			@ProjectionHandler(name = "bank-view", tag = "bank")
			void deposited(PersistentEvent<TestEvents.Deposited> event) {
				this.seen.add(event.persistenceId() + "#" + event.sequenceNr() + "+" + event.payload().amount());
			}

			@ProjectionHandler(name = "bank-view", tag = "bank")
			void withdrawn(TestEvents.Withdrawn event) {
				this.seen.add("-" + event.amount());
			}

		}

	}

}
