package io.cassandrajournal.spring.boot.shutdown;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;

import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;

/**
 * The application {@link ShutdownUnderLoadIT} runs in a JVM of its own: four writers append to their own
 * entities without pause and print {@code ACK <persistenceId> <sequenceNr>} for every acknowledged append and
 * {@code FAIL ...} for every failed one, until the context closes.
 */
@SpringBootApplication
public class AppendingApplication {

	public static void main(String[] args) {
		SpringApplication.run(AppendingApplication.class, args);
	}

	@Bean
	Writers writers(Journal journal) {
		return new Writers(journal);
	}

	/** Stops with the context: each writer finishes its append in flight, then exits. */
	static final class Writers implements SmartLifecycle {

		private final Journal journal;

		private final List<Thread> threads = new ArrayList<>();

		private volatile boolean running;

		Writers(Journal journal) {
			this.journal = journal;
		}

		@Override
		public void start() {
			this.running = true;
			for (int w = 0; w < 4; w++) {
				String persistenceId = "writer-" + w;
				Thread thread = new Thread(() -> write(persistenceId), persistenceId);
				this.threads.add(thread);
				thread.start();
			}
		}

		private void write(String persistenceId) {
			long head = this.journal.highestSequenceNr(persistenceId).toCompletableFuture().join();
			while (this.running) {
				try {
					this.journal.append(persistenceId, head, List.of(EventToAppend.of(new Event(head + 1), "load")))
						.toCompletableFuture()
						.get(30, TimeUnit.SECONDS);
					head++;
					System.out.println("ACK " + persistenceId + " " + head);
				}
				catch (Exception ex) {
					System.out.println("FAIL " + persistenceId + " " + (head + 1) + " " + ex);
					return;
				}
			}
		}

		@Override
		public void stop() {
			this.running = false;
			for (Thread thread : this.threads) {
				try {
					thread.join(TimeUnit.SECONDS.toMillis(40));
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}
			System.out.println("WRITERS STOPPED");
		}

		@Override
		public boolean isRunning() {
			return this.running;
		}

	}

	/** @param n the event's number */
	public record Event(long n) {
	}

}
