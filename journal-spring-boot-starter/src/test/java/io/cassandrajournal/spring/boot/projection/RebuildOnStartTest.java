package io.cassandrajournal.spring.boot.projection;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;

import io.cassandrajournal.inmemory.InMemoryJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.projection.InMemoryOffsetStore;
import io.cassandrajournal.projection.OffsetStore;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionId;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.serialization.JacksonEventSerializer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@code @ProjectionHandler(rebuildOnStart = true)}: an in-memory view is rebuilt from the beginning on every
 * start, while a projection with a durable cursor resumes where it was, and the rebuilt projection never touches
 * the durable store. Two "runs" of an application share the journal and the durable offset store.
 */
class RebuildOnStartTest {

	static final List<Long> inMemoryView = new CopyOnWriteArrayList<>();

	static final List<Long> durableView = new CopyOnWriteArrayList<>();

	static class Views {

		@ProjectionHandler(name = "memory-view", persistenceId = "acct-1", rebuildOnStart = true)
		void rebuilt(TestEvents.Deposited deposited) {
			inMemoryView.add(deposited.amount());
		}

		@ProjectionHandler(name = "stored-view", persistenceId = "acct-1")
		void resumed(TestEvents.Deposited deposited) {
			durableView.add(deposited.amount());
		}

	}

	@Test
	void theInMemoryViewIsRebuiltOnEveryStartAndTheDurableOneResumes() throws Exception {
		InMemoryJournal journal = new InMemoryJournal();
		OffsetStore durable = new InMemoryOffsetStore();
		journal.append("acct-1", 0, List.of(EventToAppend.of(new TestEvents.Deposited(1)),
				EventToAppend.of(new TestEvents.Deposited(2)))).toCompletableFuture().get(10, TimeUnit.SECONDS);

		run(journal, durable);
		assertThat(inMemoryView).containsExactly(1L, 2L);
		assertThat(durableView).containsExactly(1L, 2L);

		inMemoryView.clear();
		durableView.clear();
		journal.append("acct-1", 2, List.of(EventToAppend.of(new TestEvents.Deposited(3))))
			.toCompletableFuture()
			.get(10, TimeUnit.SECONDS);
		run(journal, durable);
		assertThat(inMemoryView).as("rebuilt from the beginning").containsExactly(1L, 2L, 3L);
		assertThat(durableView).as("resumed after its durable cursor").containsExactly(3L);
		assertThat(durable.load(new ProjectionId("memory-view", "pid:acct-1")).toCompletableFuture().get())
			.as("the durable store never holds the rebuilt projection's cursor")
			.isEmpty();
		assertThat(durable.load(new ProjectionId("stored-view", "pid:acct-1")).toCompletableFuture().get())
			.hasValueSatisfying((offset) -> assertThat(offset.sequenceNr()).isEqualTo(3));
	}

	@Test
	void withAnEngineWhoseStoreIsNotWrappedItFailsStartUp() {
		try (ProjectionEngine engine = ProjectionEngine.builder(new InMemoryJournal()).build()) {
			ProjectionLifecycle lifecycle = new ProjectionLifecycle(engine, factory(),
					new JacksonEventSerializer(), ProjectionSettings.defaults(), null, new InMemoryCursors());
			assertThatExceptionOfType(ProjectionDeclarationException.class)
				.isThrownBy(lifecycle::afterSingletonsInstantiated)
				.withMessageContaining("rebuildOnStart needs the auto-configured ProjectionEngine");
		}
	}

	/** One run of the application: start, wait until both views saw the journal's 3 (or 2) events, stop. */
	private static void run(InMemoryJournal journal, OffsetStore durable) {
		InMemoryCursors cursors = new InMemoryCursors();
		try (ProjectionEngine engine = ProjectionEngine.builder(journal).offsetStore(cursors.around(durable)).build()) {
			ProjectionLifecycle lifecycle = new ProjectionLifecycle(engine, factory(), new JacksonEventSerializer(),
					ProjectionSettings.defaults(), null, cursors);
			lifecycle.afterSingletonsInstantiated();
			lifecycle.start();
			long head = journal.highestSequenceNr("acct-1").toCompletableFuture().join();
			// Bound: in memory the events arrive at once; 10 s allows for a slow machine.
			await().atMost(Duration.ofSeconds(10))
				.until(() -> engine.projections()
					.stream()
					.allMatch((control) -> control.status().offset().sequenceNr() == head));
			lifecycle.stop();
		}
	}

	private static DefaultListableBeanFactory factory() {
		DefaultListableBeanFactory factory = new DefaultListableBeanFactory();
		factory.registerBeanDefinition("views", new RootBeanDefinition(Views.class));
		return factory;
	}

}
