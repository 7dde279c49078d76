package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.IntStream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.TagFilter;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Dead letters of a projection split into segments, over the in-memory journal: each segment's runner parks and
 * redelivers the letters of its own entities. Waits are bounded by {@link #BOUND}.
 */
class SegmentDeadLettersTest {

	private static final Duration BOUND = Duration.ofSeconds(10);

	private final InMemoryJournal journal = new InMemoryJournal();

	private final InMemoryDeadLetterQueue letters = new InMemoryDeadLetterQueue();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal)
		.readJournal(this.journal.readJournal())
		.offsetStore(new InMemoryOffsetStore())
		.deadLetterQueue(this.letters)
		.build();

	@AfterEach
	void close() {
		this.engine.close();
	}

	private void append(String persistenceId, long expected) {
		result(this.journal.append(persistenceId, expected, List.of(EventToAppend.of("e" + (expected + 1), "account"))));
	}

	@Test
	void aRedeliveryUnparksTheEntityInTheSegmentThatRunsIt() {
		SliceRange second = SliceRange.split(2).get(1);
		String bad = IntStream.range(0, 1000).mapToObj((i) -> "account-" + i)
			.filter((id) -> second.contains(this.journal.readJournal().sliceOf(id)))
			.findFirst()
			.orElseThrow();
		AtomicBoolean broken = new AtomicBoolean(true);
		List<String> seen = new CopyOnWriteArrayList<>();
		ProjectionControl control = this.engine.register(Projection.byTag("view", TagFilter.tag("account"),
				String.class, EventHandler.blocking((event) -> {
					if (broken.get() && event.persistenceId().equals(bad)) {
						throw new IllegalStateException("broken handler");
					}
					seen.add(event.persistenceId() + "#" + event.sequenceNr());
				}), ProjectionSettings.defaults().withSegments(2).withRecoveryStrategy(RecoveryStrategy.SKIP)
					.withParkAfterDeadLetter(true).withPollInterval(Duration.ofMillis(20))));
		result(control.start());
		append(bad, 0);
		append(bad, 1);
		await("both events dead-lettered").atMost(BOUND).until(() -> result(this.letters.list("view", 10)).size() == 2);

		broken.set(false);
		assertThat(result(control.redeliverDeadLetters())).isEqualTo(2);
		append(bad, 2);

		await("the next event handled, not parked").atMost(BOUND).until(() -> seen.contains(bad + "#3"));
		assertThat(seen).containsExactly(bad + "#1", bad + "#2", bad + "#3");
		assertThat(result(this.letters.list("view", 10))).isEmpty();
	}

}
