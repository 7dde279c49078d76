package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.EventsPage;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tag and filter projections over the in-memory journal and its read side: the engine depends on the
 * {@link io.cassandrajournal.query.ReadJournal} interface only, so no Cassandra node is involved. Waits are
 * bounded by {@link #BOUND}.
 */
class InMemoryTagProjectionTest {

	private static final Duration BOUND = Duration.ofSeconds(10);

	private final InMemoryJournal journal = new InMemoryJournal();

	private final InMemoryOffsetStore offsets = new InMemoryOffsetStore();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal)
		.readJournal(this.journal.readJournal())
		.offsetStore(this.offsets)
		.build();

	@AfterEach
	void close() {
		this.engine.close();
	}

	private void append(String persistenceId, long expected, String payload, String... tags) {
		result(this.journal.append(persistenceId, expected, List.of(EventToAppend.of(payload, tags))));
	}

	@Test
	void aTagProjectionHandlesTheTaggedEventsInOffsetOrderAndStoresItsCursor() {
		List<String> seen = new CopyOnWriteArrayList<>();
		ProjectionControl control = this.engine.register(Projection.byTag("view", TagFilter.tag("account"),
				String.class, EventHandler.blocking((event) -> seen.add(event.payload().replace("\"", ""))),
				ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20))));
		append("a", 0, "a1", "account");
		append("b", 0, "b1", "other");
		append("a", 1, "a2", "account");

		result(control.start());
		await().atMost(BOUND).until(() -> seen.size() == 2);
		append("b", 1, "b2", "account");

		await().atMost(BOUND).until(() -> seen.size() == 3);
		assertThat(seen).containsExactly("a1", "a2", "b2");
		await().atMost(BOUND).until(() -> result(this.offsets.load(control.id())).isPresent());
	}

	@Test
	void aFilterProjectionTakesAnyOfItsTagsAndLeavesOutTheExcludedOnes() {
		List<String> seen = new CopyOnWriteArrayList<>();
		TagFilter filter = TagFilter.of(List.of("deposit", "withdrawal"), List.of(), List.of("test"));
		ProjectionControl control = this.engine.register(Projection.byTag("money", filter, String.class,
				EventHandler.blocking((event) -> seen.add(event.payload().replace("\"", ""))),
				ProjectionSettings.defaults().withPollInterval(Duration.ofMillis(20))));
		append("a", 0, "a1", "deposit");
		append("a", 1, "a2", "withdrawal", "test");
		append("a", 2, "a3", "fee");
		append("b", 0, "b1", "withdrawal");

		result(control.start());

		await().atMost(BOUND).until(() -> seen.size() == 2);
		assertThat(seen).containsExactly("a1", "b1");
	}

	@Test
	void currentEventsByTagPagesInOffsetOrder() {
		for (int i = 0; i < 5; i++) {
			append("p" + i, 0, "e" + i, "t");
		}
		EventsPage<String> first = result(this.journal.readJournal().currentEventsByTag(TagFilter.tag("t"),
				TagOffset.START, 3, String.class));
		EventsPage<String> rest = result(this.journal.readJournal().currentEventsByTag(TagFilter.tag("t"),
				first.resumeAfter(), 3, String.class));

		assertThat(first.caughtUp()).isFalse();
		assertThat(rest.caughtUp()).isTrue();
		assertThat(first.events().stream().map((e) -> e.event().payload()).toList()).hasSize(3);
		assertThat(rest.events()).hasSize(2);
		assertThat(first.events().get(2).offset()).isLessThan(rest.events().get(0).offset());
	}

}
