package io.cassandrajournal.spring.boot.actuate;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.DeadLetter;
import io.cassandrajournal.projection.DeadLetterQueue;
import io.cassandrajournal.projection.InMemoryOffsetStore;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionHandler;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionState;
import io.cassandrajournal.query.TagOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The endpoint's control input is checked per projection kind: what the projection's source cannot
 * resume from is a bad request (400) with the reason, and the stored cursor stays as it was.
 */
class ProjectionsEndpointTest {

	private final InMemoryJournal journal = new InMemoryJournal();

	private final InMemoryOffsetStore offsets = new InMemoryOffsetStore();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal).offsetStore(this.offsets).build();

	private final ProjectionsEndpoint endpoint = new ProjectionsEndpoint(this.engine);

	private final List<Long> handled = new CopyOnWriteArrayList<>();

	private ProjectionControl control;

	@BeforeEach
	void start() throws Exception {
		this.journal.append("acct-1", 0, List.of(EventToAppend.of("one"), EventToAppend.of("two")))
			.toCompletableFuture()
			.get(10, TimeUnit.SECONDS);
		this.control = this.engine.register(Projection.byPersistenceId("by-pid", "acct-1", String.class,
				ProjectionHandler.blocking((event) -> this.handled.add(event.sequenceNr())), ProjectionSettings.defaults()));
		this.control.start().toCompletableFuture().get(10, TimeUnit.SECONDS);
		await().until(() -> this.control.status().offset().sequenceNr() == 2);
	}

	@AfterEach
	void close() {
		this.engine.close();
	}

	private TagOffset stored() throws Exception {
		return this.offsets.load(this.control.id()).toCompletableFuture().get(10, TimeUnit.SECONDS).orElseThrow();
	}

	@Test
	void aTimestampResetOfAByPersistenceIdProjectionIsABadRequest() throws Exception {
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.endpoint.control("by-pid", "reset", 1_700_000_000_000L, null))
			.satisfies((ex) -> assertThat(ex.getReason()).contains("by-pid").contains("fromSequenceNr"));
		assertThat(stored().sequenceNr()).isEqualTo(2);
		assertThat(this.control.status().state()).isEqualTo(ProjectionState.RUNNING);
		this.journal.append("acct-1", 2, List.of(EventToAppend.of("three"))).toCompletableFuture().get(10, TimeUnit.SECONDS);
		await().until(() -> this.handled.contains(3L));
	}

	@Test
	void badSequenceNumbersBothKindsAtOnceAndUnknownActionsAreBadRequests() throws Exception {
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.endpoint.control("by-pid", "reset", null, 0L))
			.satisfies((ex) -> assertThat(ex.getReason()).contains("fromSequenceNr must be at least 1"));
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.endpoint.control("by-pid", "reset", 5L, 1L))
			.satisfies((ex) -> assertThat(ex.getReason()).contains("not both"));
		assertThatExceptionOfType(InvalidEndpointRequestException.class)
			.isThrownBy(() -> this.endpoint.control("by-pid", "rewind", null, null))
			.satisfies((ex) -> assertThat(ex.getReason()).contains("Unknown action 'rewind'"));
		assertThat(stored().sequenceNr()).isEqualTo(2);
	}

	@Test
	void aSequenceNumberResetRedeliversFromThatEvent() {
		this.endpoint.control("by-pid", "reset", null, 2L);
		await().until(() -> this.handled.size() == 3);
		assertThat(this.handled).containsExactly(1L, 2L, 2L);
	}

	@Test
	@SuppressWarnings("unchecked")
	void aProjectionOfOneSegmentWithoutSharingListsOneRangeRunHereWithItsCursor() {
		List<Map<String, Object>> segments = (List<Map<String, Object>>) this.endpoint.projection("by-pid").get("segments");
		assertThat(segments).singleElement().satisfies((segment) -> {
			assertThat(segment).containsEntry("range", "0-1023").containsEntry("owner", null)
				.containsEntry("epoch", 0L).containsEntry("runsHere", true).containsEntry("state", "RUNNING")
				.doesNotContainKey("ownerlessForMillis");
			assertThat((Map<String, Object>) segment.get("cursor")).containsEntry("sequenceNr", 2L);
		});
		List<Map<String, Object>> listed = (List<Map<String, Object>>) this.endpoint.projections().get("projections");
		assertThat(listed).singleElement().satisfies((projection) -> assertThat((List<?>) projection.get("segments"))
			.hasSize(1));
	}

	@Test
	@SuppressWarnings("unchecked")
	void aFailedDeadLetterReadStillAnswersWithTheStateAndMarksTheDeadLettersUnavailable() throws Exception {
		try (ProjectionEngine failing = ProjectionEngine.builder(this.journal)
			.offsetStore(new InMemoryOffsetStore())
			.deadLetterQueue(new DeadLetterQueue() {

				@Override
				public CompletionStage<Void> add(DeadLetter deadLetter) {
					return CompletableFuture.failedFuture(new IllegalStateException("dead letter table unavailable"));
				}

				@Override
				public CompletionStage<List<DeadLetter>> list(String projectionName, int limit) {
					return CompletableFuture.failedFuture(new IllegalStateException("dead letter table unavailable"));
				}

				@Override
				public CompletionStage<Void> remove(DeadLetter deadLetter) {
					return CompletableFuture.completedFuture(null);
				}

			})
			.build()) {
			ProjectionControl other = failing.register(Projection.byPersistenceId("by-pid-2", "acct-1", String.class,
					ProjectionHandler.blocking((event) -> {
					}), ProjectionSettings.defaults()));
			other.start().toCompletableFuture().get(10, TimeUnit.SECONDS);
			// Bound: the in-memory journal delivers at once; 10 s allows for a slow machine.
			await().atMost(Duration.ofSeconds(10)).until(() -> other.status().offset().sequenceNr() == 2);

			Map<String, Object> body = new ProjectionsEndpoint(failing).projection("by-pid-2");

			assertThat(body).containsEntry("name", "by-pid-2").containsEntry("state", "RUNNING")
				.containsEntry("deadLetters", null);
			assertThat((List<?>) body.get("segments")).hasSize(1);
			assertThat((String) body.get("deadLettersError")).contains("reading the dead letters failed")
				.contains("dead letter table unavailable");
		}
	}

}
