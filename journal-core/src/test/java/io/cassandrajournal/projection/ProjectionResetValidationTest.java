package io.cassandrajournal.projection;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.AccountEvent.Deposited;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * {@code reset} refuses an offset the projection's source cannot resume from, before stopping anything: the
 * stored cursor and the running projection stay as they were.
 */
class ProjectionResetValidationTest {

	private final InMemoryJournal journal = new InMemoryJournal();

	private final InMemoryOffsetStore offsets = new InMemoryOffsetStore();

	private final ProjectionEngine engine = ProjectionEngine.builder(this.journal).offsetStore(this.offsets).build();

	private final List<Long> handled = new CopyOnWriteArrayList<>();

	@AfterEach
	void close() {
		this.engine.close();
	}

	private ProjectionControl startByPersistenceId() {
		result(this.journal.append("account-1", 0,
				List.of(EventToAppend.of(new Deposited(1)), EventToAppend.of(new Deposited(2)))));
		ProjectionControl control = this.engine.register(Projection.byPersistenceId("view", "account-1",
				AccountEvent.class, ProjectionHandler.blocking((event) -> this.handled.add(event.sequenceNr())),
				ProjectionSettings.defaults()));
		result(control.start());
		await().until(() -> this.handled.size() == 2);
		await().until(() -> control.status().offset().sequenceNr() == 2);
		return control;
	}

	@Test
	void aByPersistenceIdProjectionRefusesAnOffsetAfterEverySequenceNumber() {
		ProjectionControl control = startByPersistenceId();
		// What a reset "from a time stamp" used to build for every projection kind.
		assertThatIllegalArgumentException().isThrownBy(() -> result(control.reset(new TagOffset(41, "", Long.MAX_VALUE))))
			.withMessageContaining("view")
			.withMessageContaining("sequence number");
		assertThat(result(this.offsets.load(control.id()))).get().extracting(TagOffset::sequenceNr).isEqualTo(2L);
		assertThat(control.status().state()).isEqualTo(ProjectionState.RUNNING);
		result(this.journal.append("account-1", 2, List.of(EventToAppend.of(new Deposited(3)))));
		await().until(() -> this.handled.contains(3L));
	}

	@Test
	void aByPersistenceIdProjectionRefusesAnotherEntitysOffsetAndNegativeValues() {
		ProjectionControl control = startByPersistenceId();
		assertThatIllegalArgumentException().isThrownBy(() -> result(control.reset(new TagOffset(0, "account-2", 1))))
			.withMessageContaining("account-2");
		assertThatIllegalArgumentException().isThrownBy(() -> result(control.reset(new TagOffset(0, "", -1))))
			.withMessageContaining("-1");
		assertThat(result(this.offsets.load(control.id()))).get().extracting(TagOffset::sequenceNr).isEqualTo(2L);
		result(control.reset(new TagOffset(0, "account-1", 1)));
		await().until(() -> this.handled.size() == 3);
		assertThat(this.handled).containsExactly(1L, 2L, 2L);
	}

}
