package io.cassandrajournal.spring.boot.it;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.config.DefaultDriverOption;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.cassandra.autoconfigure.DriverConfigLoaderBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Component;

import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.spring.boot.projection.ProjectionHandler;
import io.cassandrajournal.spring.boot.projection.TestEvents;

/**
 * An application with two projections declared by annotation.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class StarterTestApplication {

	@Bean
	DriverConfigLoaderBuilderCustomizer fastReconnection() {
		return (builder) -> builder.withDuration(DefaultDriverOption.RECONNECTION_BASE_DELAY, Duration.ofMillis(200))
			.withDuration(DefaultDriverOption.RECONNECTION_MAX_DELAY, Duration.ofSeconds(2))
			.withDuration(DefaultDriverOption.REQUEST_TIMEOUT, Duration.ofSeconds(5))
			.withDuration(DefaultDriverOption.METADATA_SCHEMA_WINDOW, Duration.ZERO);
	}

	@Component
	static class Views {

		final List<String> byTag = new CopyOnWriteArrayList<>();

		final List<Long> byPid = new CopyOnWriteArrayList<>();

		@ProjectionHandler(name = "by-tag", tag = "starter")
		void deposited(PersistentEvent<TestEvents.Deposited> event) {
			this.byTag.add(event.persistenceId() + "#" + event.sequenceNr() + "+" + event.payload().amount());
		}

		@ProjectionHandler(name = "by-tag", tag = "starter")
		void withdrawn(TestEvents.Withdrawn event) {
			this.byTag.add("-" + event.amount());
		}

		/**
		 * While set, the by-pid handler does not end an event until it opens (at most 30 s), without holding a
		 * thread of the engine: JournalStarterIT holds a reset in progress with it.
		 */
		volatile @Nullable CountDownLatch byPidGate;

		/** The events the by-pid handler took while {@link #byPidGate} was set. */
		final List<Long> byPidHeld = new CopyOnWriteArrayList<>();

		@ProjectionHandler(name = "by-pid", persistenceId = "starter-acct-1")
		CompletionStage<Void> one(PersistentEvent<TestEvents> event) {
			CountDownLatch gate = this.byPidGate;
			if (gate == null) {
				this.byPid.add(event.sequenceNr());
				return CompletableFuture.completedFuture(null);
			}
			this.byPidHeld.add(event.sequenceNr());
			return CompletableFuture.runAsync(() -> {
				try {
					gate.await(30, TimeUnit.SECONDS);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
				this.byPid.add(event.sequenceNr());
			});
		}

	}

}
