package io.cassandrajournal;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import com.datastax.oss.driver.api.core.AllNodesFailedException;
import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.launcher.CassandraNode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Opening a session while Cassandra is not up yet: the journal's own session waits for it (startupWait),
 * and gives up with the driver's "no node answered" error when it does not come.
 */
class CassandraSessionsIT {

	@Test
	void aSessionOpenedBeforeItsNodeStartsConnectsOnceTheNodeAnswers() throws Exception {
		try (CassandraNode node = CassandraNode.builder().maxHeap("512m").build()) {
			CassandraJournalOptions options = CassandraJournalOptions.create()
				.withContactPoints(List.of(node.host() + ":" + node.nativePort()))
				.withLocalDatacenter(node.datacenter())
				.withStartupWait(Duration.ofMinutes(3));
			CompletableFuture<CqlSession> opening = CompletableFuture.supplyAsync(() -> CassandraSessions.open(options));
			Thread.sleep(1500);
			assertThat(opening).as("nothing listens yet: still trying").isNotDone();
			node.start();
			try (CqlSession session = opening.get(3, TimeUnit.MINUTES)) {
				assertThat(session.execute("SELECT release_version FROM system.local").one().getString(0)).startsWith("5.");
			}
		}
	}

	@Test
	void withoutANodeItGivesUpAfterTheWait() {
		try (CassandraNode never = CassandraNode.builder().build()) {
			CassandraJournalOptions options = CassandraJournalOptions.create()
				.withContactPoints(List.of(never.host() + ":" + never.nativePort()))
				.withLocalDatacenter("datacenter1")
				.withStartupWait(Duration.ofSeconds(1));
			long started = System.nanoTime();
			assertThatExceptionOfType(AllNodesFailedException.class).isThrownBy(() -> CassandraSessions.open(options));
			assertThat(Duration.ofNanos(System.nanoTime() - started)).as("it tried for the whole wait")
				.isGreaterThanOrEqualTo(Duration.ofSeconds(1));
			CassandraJournalOptions noWait = options.withStartupWait(Duration.ZERO);
			assertThatExceptionOfType(AllNodesFailedException.class).isThrownBy(() -> CassandraSessions.open(noWait));
		}
	}

}
