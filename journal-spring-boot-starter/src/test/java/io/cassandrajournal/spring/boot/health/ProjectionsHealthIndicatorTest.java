package io.cassandrajournal.spring.boot.health;

import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.health.contributor.Health;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionId;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionState;
import io.cassandrajournal.projection.ProjectionStatus;
import io.cassandrajournal.query.TagOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The projections health shows what a reader can use: the last handled event by identity and the resume point in
 * words, not a by-tag cursor's empty persistenceId and zero sequence number.
 */
class ProjectionsHealthIndicatorTest {

	private final InMemoryJournal journal = new InMemoryJournal();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal).build();

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	@SuppressWarnings("unchecked")
	void showsTheLastHandledEventAndWhereReadingResumes() throws Exception {
		this.journal.append("acct-1", 0, List.of(EventToAppend.of("one"), EventToAppend.of("two")))
			.toCompletableFuture()
			.get(10, TimeUnit.SECONDS);
		ProjectionControl control = this.engine.register(Projection.byPersistenceId("balances", "acct-1", String.class,
				(event) -> CompletableFuture.completedFuture(null), ProjectionSettings.defaults()));
		control.start();
		// Bound: the in-memory journal delivers at once; 10 s allows for a slow machine.
		await().atMost(Duration.ofSeconds(10)).until(() -> control.status().offset().sequenceNr() == 2);

		Health health = new ProjectionsHealthIndicator(this.engine, EnumSet.of(ProjectionState.FAILED)).health(true);
		Map<String, Object> view = (Map<String, Object>) ((Map<String, Object>) health.getDetails().get("projections"))
			.get("balances");
		Map<String, Object> last = (Map<String, Object>) view.get("lastHandledEvent");
		assertThat(last).containsEntry("persistenceId", "acct-1").containsEntry("sequenceNr", 2L);
		assertThat(Instant.parse((String) last.get("timestamp"))).isBeforeOrEqualTo(Instant.now());
		assertThat((String) view.get("resumesFrom")).startsWith("after acct-1 #2");
		assertThat(view).doesNotContainKey("offset").containsEntry("state", "RUNNING").containsEntry("eventsHandled", 2L);
	}

	@Test
	void aByTagCursorIsShownAsATimeNotAsAnEmptyEvent() {
		Instant safePoint = Instant.parse("2026-12-01T00:00:00Z");
		ProjectionStatus status = new ProjectionStatus(new ProjectionId("feed", "any(account)"), ProjectionState.RUNNING,
				new TagOffset(safePoint.toEpochMilli(), "", 0), 5, 0, safePoint.plusSeconds(8), Duration.ZERO, 0, null,
				new ProjectionStatus.HandledEvent("acct-9", 4, safePoint.plusSeconds(8)));
		Map<String, Object> view = ProjectionsHealthIndicator.view(status);
		assertThat(view.get("resumesFrom")).asString()
			.startsWith("events written from 2026-12-01T00:00:00Z on")
			.doesNotContain("sequenceNr");
		assertThat(view.get("lastHandledEvent")).isEqualTo(
				Map.of("persistenceId", "acct-9", "sequenceNr", 4L, "timestamp", "2026-12-01T00:00:08Z"));
		ProjectionStatus fresh = new ProjectionStatus(new ProjectionId("feed", "any(account)"), ProjectionState.RUNNING,
				TagOffset.START, 0, 0, null, Duration.ZERO, 0, null);
		assertThat(ProjectionsHealthIndicator.view(fresh)).containsEntry("resumesFrom", "the beginning")
			.containsEntry("lastHandledEvent", null)
			.doesNotContainKey("deletedEvents");
	}

	@Test
	void aRangeACleanupDeletedBeforeTheProjectionReadItIsADetail() {
		ProjectionStatus byId = new ProjectionStatus(new ProjectionId("balances", "persistenceId(acct-1)"),
				ProjectionState.RUNNING, new TagOffset(0, "acct-1", 15), 5, 0, null, Duration.ZERO, 0, null, null,
				ProjectionStatus.DeletedEvents.byPersistenceId("acct-1", new SequenceRange(4, 10)));
		assertThat(ProjectionsHealthIndicator.view(byId).get("deletedEvents")).asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("persistenceId", "acct-1")
			.containsEntry("sequenceNrs", "4..10")
			.hasEntrySatisfying("description", (text) -> assertThat(text).asString().contains("were deleted"));
		ProjectionStatus byTag = new ProjectionStatus(new ProjectionId("feed", "any(account)"), ProjectionState.RUNNING,
				TagOffset.START, 5, 0, null, Duration.ZERO, 0, null, null,
				ProjectionStatus.DeletedEvents.byTag("account", Instant.parse("2026-02-01T08:02:00Z")));
		assertThat(ProjectionsHealthIndicator.view(byTag).get("deletedEvents")).asInstanceOf(InstanceOfAssertFactories.MAP)
			.containsEntry("tag", "account")
			.containsEntry("droppedBefore", "2026-02-01T08:02:00Z");
		assertThat(ProjectionsHealthIndicator.view(byTag)).containsEntry("state", "RUNNING");
	}

}
