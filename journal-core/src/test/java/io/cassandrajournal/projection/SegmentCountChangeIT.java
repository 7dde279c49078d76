package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.FeedSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Changing a projection's number of segments keeps its progress (issue 15), on a real node, with and without
 * sharing: a by-tag projection runs with the old count over a stream (phase 1) until every segment's stored cursor
 * is at its last event, and stops; one old cursor is then moved back to an event in the middle of the stream (X), so that
 * the old segments' cursors differ and a merge that took the higher one would lose X. More events are appended
 * while it is stopped; it restarts with the new count (phase 2) and more events are appended.
 * <ul>
 * <li>Nothing is lost: every event appended after phase 1 is handled in phase 2, and so is X (its new range
 * starts at or before X: a split starts from its parent's cursor, a merge from the lowest of its parts').</li>
 * <li>It does not start over: no event stamped more than the backtrack window before X (every old cursor is at or
 * past X, and a restarted feed re-delivers what lies within the backtrack window behind its cursor, by design) is
 * handled again. The first events are appended in two halves more than twice the backtrack window apart, and X is
 * the first of the second half.</li>
 * </ul>
 * Each case uses its own tag and projection name. Waits are bounded: 30 s each (a poll every 100 ms, a backtrack
 * window of 500 ms).
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SegmentCountChangeIT {

	private static final int ENTITIES = 64;

	private static final Duration WAIT = Duration.ofSeconds(30);

	private static final Duration BACKTRACK = Duration.ofMillis(500);

	private CassandraJournalOptions options;

	private CassandraJournal journal;

	private CassandraReadJournal query;

	private CassandraDurableStateStore state;

	private TestKeyspace keyspace;

	/** Every event handled, by phase. */
	private final List<Handled> handled = new CopyOnWriteArrayList<>();

	private volatile int phase;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		this.journal = CassandraJournal.create(keyspace.session(), this.options, serializer);
		this.query = CassandraReadJournal.create(this.journal, keyspace.session(), this.options, serializer);
		this.state = CassandraDurableStateStore.create(keyspace.session(), this.options, serializer);
	}

	@ParameterizedTest(name = "{0} -> {1} segments, shared: {2}")
	@CsvSource({ "4, 8, true", "8, 2, true", "1, 4, true", "4, 1, true", "4, 8, false", "8, 2, false",
			"1, 4, false", "4, 1, false" })
	void changingTheNumberOfSegmentsKeepsTheProgress(int before, int after, boolean shared) {
		this.handled.clear();
		String tag = "count-" + before + "-" + after + "-" + shared;
		String name = "projection-" + tag;
		ProjectionId id = ProjectionId.byTag(name, TagFilter.tag(tag));

		this.phase = 1;
		// Two halves, the second stamped more than twice the backtrack window after the first: a restarted feed
		// re-delivers what lies within the backtrack window behind its cursor (by design), so only events older
		// than that are a sign of starting over.
		List<Appended> first = new ArrayList<>(append(tag, "first", 1, 0, ENTITIES / 2));
		long lastOfFirstHalf = first.stream().mapToLong(Appended::timestamp).max().orElseThrow();
		await("the clock passes twice the backtrack window after the first half").atMost(WAIT)
			.until(() -> System.currentTimeMillis() > lastOfFirstHalf + 2 * BACKTRACK.toMillis());
		first.addAll(append(tag, "first", 1, ENTITIES / 2, ENTITIES));
		long lastOfFirst = first.stream().mapToLong(Appended::timestamp).max().orElseThrow();
		ProjectionEngine engine = engine(name, tag, before, shared);
		try {
			result(engine.startAll());
			await("phase 1 handles every event").atMost(WAIT)
				.until(() -> handledIn(1).containsAll(keys(first)));
			// Idle, a segment's cursor rests at the feed's last event (every segment reads the whole tag feed).
			await("every old segment's cursor is at the last of the first events").atMost(WAIT)
				.until(() -> cursors(id, before).stream()
					.allMatch((c) -> c.isPresent() && c.get().timestamp() >= lastOfFirst));
		}
		finally {
			engine.close();
		}

		// X: the event in the middle of the first ones; its old segment's cursor goes back to it.
		Appended x = first.stream().sorted(Comparator.comparingLong(Appended::timestamp)).toList().get(ENTITIES / 2);
		SliceRange xRange = SliceRange.split(before)
			.stream()
			.filter((r) -> r.contains(this.query.sliceOf(x.persistenceId())))
			.findFirst().orElseThrow();
		TagOffset back = id.offsetFromTimestamp(x.timestamp());
		result(new DurableStateOffsetStore(this.state).save(cursorId(id, xRange, before), back));
		List<TagOffset> old = cursors(id, before).stream().map(Optional::orElseThrow).toList();
		assertThat(old).as("every old cursor at or past X").allMatch((c) -> c.compareTo(back) >= 0);

		this.phase = 2;
		List<Appended> later = new ArrayList<>(append(tag, "while-stopped", 1));
		engine = engine(name, tag, after, shared);
		try {
			result(engine.startAll());
			later.addAll(append(tag, "after-restart", 1));
			await("phase 2 handles every later event, and X again").atMost(WAIT)
				.until(() -> handledIn(2).containsAll(keys(later)) && handledIn(2).contains(x.key()));
		}
		finally {
			engine.close();
		}
		Set<String> early = first.stream()
			.filter((e) -> e.timestamp() < x.timestamp() - BACKTRACK.toMillis())
			.map(Appended::key)
			.collect(Collectors.toSet());
		assertThat(early).as("events stamped more than the backtrack window before X").hasSize(ENTITIES / 2);
		assertThat(handledIn(2)).as("phase 2 does not start over: no event older than the lowest old cursor less the "
				+ "backtrack window again")
			.doesNotContainAnyElementsOf(early);
		System.out.printf("%d -> %d segments (shared: %s): phase 2 handled %d of the %d first events again%n", before,
				after, shared, first.stream().filter((e) -> handledIn(2).contains(e.key())).count(), first.size());
	}

	/**
	 * Finding 15 item 8: a reset (rebuild) after a count change must not leave the counts used before with their
	 * old cursors. Phase 1 runs with {@code before} segments to the end; phase 2 runs with {@code after}
	 * segments and is reset to the start (a rebuild), and stops before the rebuild got anywhere (its cursors at the
	 * start); phase 3 goes back to {@code before} segments: the rebuild must go on from the start, not resume from
	 * the old count's cursors past every first event.
	 */
	@ParameterizedTest(name = "{0} -> {1} -> {0} segments")
	@CsvSource({ "4, 8", "8, 2", "1, 4" })
	void aResetAfterACountChangeIsNotUndoneByTheCursorsOfAnotherCount(int before, int after) {
		this.handled.clear();
		String tag = "reset-" + before + "-" + after;
		String name = "projection-" + tag;
		ProjectionId id = ProjectionId.byTag(name, TagFilter.tag(tag));
		this.phase = 1;
		List<Appended> first = append(tag, "first", 1);
		long lastOfFirst = first.stream().mapToLong(Appended::timestamp).max().orElseThrow();
		ProjectionEngine engine = engine(name, tag, before, false);
		try {
			result(engine.startAll());
			await("phase 1 handles every event").atMost(WAIT).until(() -> handledIn(1).containsAll(keys(first)));
			await("every old segment's cursor is at the last of the first events").atMost(WAIT)
				.until(() -> cursors(id, before).stream()
					.allMatch((c) -> c.isPresent() && c.get().timestamp() >= lastOfFirst));
		}
		finally {
			engine.close();
		}

		this.phase = 2;
		engine = engine(name, tag, after, false);
		try {
			result(engine.startAll());
			result(engine.projection(name).orElseThrow().reset(TagOffset.START));
		}
		finally {
			engine.close();
		}
		// The rebuild got nowhere before it stopped: the new count's cursors at the start.
		DurableStateOffsetStore store = new DurableStateOffsetStore(this.state);
		for (SliceRange range : SliceRange.split(after)) {
			result(store.save(cursorId(id, range, after), TagOffset.START));
		}

		this.phase = 3;
		engine = engine(name, tag, before, false);
		try {
			result(engine.startAll());
			await("phase 3 (back to " + before + " segments) goes on with the rebuild from the start").atMost(WAIT)
				.until(() -> handledIn(3).containsAll(keys(first)));
		}
		finally {
			engine.close();
		}
	}

	private ProjectionEngine engine(String name, String tag, int segments, boolean shared) {
		ProjectionEngine.Builder builder = ProjectionEngine.builder(this.journal)
			.readJournal(this.query)
			.offsetStore(new DurableStateOffsetStore(this.state));
		if (shared) {
			builder.sharing(ProjectionSharing.create(this.keyspace.session(), this.options)
				.withInstanceId("instance-" + segments)
				.withLeaseTiming(Duration.ofSeconds(3), Duration.ofMillis(500)));
		}
		ProjectionEngine engine = builder.build();
		engine.register(Projection.byTag(name, TagFilter.tag(tag), AccountEvent.class,
				EventHandler.blocking((event) -> this.handled.add(new Handled(this.phase,
						event.persistenceId() + "#" + event.sequenceNr()))),
				ProjectionSettings.defaults().withSegments(segments).withPollInterval(Duration.ofMillis(100))
					.withFeed(new FeedSettings(Duration.ZERO, BACKTRACK, 50))));
		return engine;
	}

	/** Appends one event to each entity of the tag, one after the other. */
	private List<Appended> append(String tag, String round, long sequenceNr) {
		return append(tag, round, sequenceNr, 0, ENTITIES);
	}

	/** Appends one event to each entity {@code from} (inclusive) to {@code to} (exclusive), one after the other. */
	private List<Appended> append(String tag, String round, long sequenceNr, int from, int to) {
		List<Appended> appended = new ArrayList<>();
		for (int i = from; i < to; i++) {
			String pid = tag + "-" + round + "-" + i;
			// The append's time stamp is the one its event carries in the tag feed.
			AppendResult written = result(this.journal.append(pid, sequenceNr - 1,
					List.of(EventToAppend.of(new Deposited(1), tag))));
			appended.add(new Appended(pid, sequenceNr, written.timestamp().toEpochMilli()));
		}
		return appended;
	}

	private List<Optional<TagOffset>> cursors(ProjectionId id, int segments) {
		DurableStateOffsetStore store = new DurableStateOffsetStore(this.state);
		return SliceRange.split(segments).stream().map((range) -> result(store.peek(cursorId(id, range, segments))))
			.toList();
	}

	private static ProjectionId cursorId(ProjectionId id, SliceRange range, int segments) {
		return (segments == 1) ? id : id.segment(range);
	}

	private Set<String> handledIn(int phase) {
		return this.handled.stream().filter((h) -> h.phase() == phase).map(Handled::key).collect(Collectors.toSet());
	}

	private static List<String> keys(List<Appended> events) {
		return events.stream().map(Appended::key).toList();
	}

	record Handled(int phase, String key) {
	}

	record Appended(String persistenceId, long sequenceNr, long timestamp) {

		String key() {
			return this.persistenceId + "#" + this.sequenceNr;
		}

	}

}
