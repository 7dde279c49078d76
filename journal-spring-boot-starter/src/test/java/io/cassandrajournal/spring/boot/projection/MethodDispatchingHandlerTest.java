package io.cassandrajournal.spring.boot.projection;

import java.lang.reflect.Method;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;

import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.EventUpcaster;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.serialization.Upcasters;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Which payloads reach which {@code @ProjectionHandler} method (issue 19, item 8): a method is only called
 * with payloads whose stored type resolves to its parameter type, and a parameter type no stored type can
 * resolve to fails start-up with the fix. No Cassandra, no context: the handler over a bean factory.
 */
class MethodDispatchingHandlerTest {

	/** An entity's state: no {@code @JsonTypeInfo}, so Jackson would bind any event's fields into it. */
	record AccountState(long amount) {
	}

	static class Views {

		final List<Object> seen = new CopyOnWriteArrayList<>();

		void deposited(TestEvents.Deposited event) {
			this.seen.add(event);
		}

		void withdrawn(TestEvents.Withdrawn event) {
			this.seen.add(event);
		}

		void state(AccountState state) {
			this.seen.add(state);
		}

	}

	private final Views views = new Views();

	private MethodDispatchingHandler handler(String... methodNames) throws Exception {
		return handler(new JacksonEventSerializer(), methodNames);
	}

	private MethodDispatchingHandler handler(JacksonEventSerializer serializer, String... methodNames) throws Exception {
		DefaultListableBeanFactory beanFactory = new DefaultListableBeanFactory();
		beanFactory.registerSingleton("views", this.views);
		List<HandlerMethod> methods = new ArrayList<>();
		for (String name : methodNames) {
			Method method = Arrays.stream(Views.class.getDeclaredMethods())
				.filter((m) -> m.getName().equals(name))
				.findFirst()
				.orElseThrow();
			methods.add(new HandlerMethod("views", method, method.getParameterTypes()[0], false));
		}
		ProjectionDeclaration declaration = new ProjectionDeclaration("view", TagFilter.tag("t"), null, methods,
				ProjectionSettings.defaults(), true, false);
		return new MethodDispatchingHandler(declaration, beanFactory, serializer, null);
	}

	private static PersistentEvent<String> stored(String json) {
		return new PersistentEvent<>("acct-1", 1, Instant.EPOCH, Set.of("t"), json);
	}

	@Test
	void aParameterTypeNoStoredTypeResolvesToFailsStartUpWithTheFix() {
		assertThatThrownBy(() -> handler("state")).isInstanceOf(ProjectionDeclarationException.class)
			.hasMessageContaining("views.state")
			.hasMessageContaining(AccountState.class.getName())
			.hasMessageContaining("@JsonTypeInfo")
			.hasMessageContaining("PersistentEvent<ThatType>");
	}

	@Test
	void aStateClassIsNeverBoundToAnEventPayload() throws Exception {
		// Before the fix this handler was created, and a Deposited payload was bound into AccountState.
		try {
			handler("state").handle(stored("{\"kind\":\"deposited\",\"amount\":5}")).toCompletableFuture().join();
		}
		catch (ProjectionDeclarationException expected) {
			// refused at start-up instead
		}
		assertThat(this.views.seen).isEmpty();
	}

	@Test
	void aHandlerIsOnlyCalledWithPayloadsWhoseStoredTypeResolvesToItsParameter() throws Exception {
		MethodDispatchingHandler handler = handler("deposited");

		handler.handle(stored("{\"kind\":\"withdrawn\",\"amount\":2}")).toCompletableFuture().join();
		handler.handle(stored("{\"kind\":\"closed\"}")).toCompletableFuture().join();
		handler.handle(stored("{\"kind\":\"deposited\",\"amount\":5}")).toCompletableFuture().join();

		assertThat(this.views.seen).containsExactly(new TestEvents.Deposited(5));
	}

	@Test
	void anEventAnUpcasterSplitReachesTheMethodOfEachPartInOrder() throws Exception {
		JacksonEventSerializer serializer = new JacksonEventSerializer(Upcasters.builder()
			.add(EventUpcaster.splitting("moved", 1, (event) -> List.of(
					event.objectNode().put("kind", "withdrawn").put("amount", event.get("amount").asLong()),
					event.objectNode().put("kind", "deposited").put("amount", event.get("amount").asLong()))))
			.build());
		MethodDispatchingHandler handler = handler(serializer, "withdrawn", "deposited");

		handler.handle(stored("{\"kind\":\"moved\",\"amount\":3}")).toCompletableFuture().join();

		assertThat(this.views.seen).containsExactly(new TestEvents.Withdrawn(3), new TestEvents.Deposited(3));
	}

}
