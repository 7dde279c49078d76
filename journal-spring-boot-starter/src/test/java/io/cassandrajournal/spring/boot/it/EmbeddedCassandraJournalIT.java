package io.cassandrajournal.spring.boot.it;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.core.env.Environment;

import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.launcher.CassandraNode;
import io.cassandrajournal.spring.boot.embedded.EmbeddedCassandra;
import io.cassandrajournal.spring.boot.projection.TestEvents;
import io.cassandrajournal.spring.boot.test.EmbeddedCassandraJournal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@code @EmbeddedCassandraJournal} on a test: no contact points configured anywhere, yet the application
 * runs on a real node the starter started on a free port, with the keyspace created.
 */
@SpringBootTest(classes = StarterTestApplication.class,
		properties = { "journal.cassandra.keyspace=embedded_annotation", "journal.cassandra.use-tag-index=true",
				"journal.cassandra.projections.poll-interval=200ms", "journal.cassandra.embedded.max-heap=512m" })
@EmbeddedCassandraJournal
class EmbeddedCassandraJournalIT {

	@Autowired
	private Journal journal;

	@Autowired
	private StarterTestApplication.Views views;

	@Autowired
	private Environment environment;

	@Test
	void theApplicationRunsOnANodeTheAnnotationStarted() {
		CassandraNode node = EmbeddedCassandra.node();
		assertThat(node).isNotNull();
		assertThat(node.isRunning()).isTrue();
		assertThat(node.nativePort()).as("a free port, not 9042").isNotEqualTo(9042);
		assertThat(this.environment.getProperty("spring.cassandra.contact-points"))
			.isEqualTo(node.host() + ":" + node.nativePort());
		this.journal.append("embedded-1", 0, List.of(EventToAppend.of(new TestEvents.Deposited(7), "starter")))
			.toCompletableFuture()
			.join();
		await().until(() -> this.views.byTag.contains("embedded-1#1+7"));
	}

}
