package io.cassandrajournal.spring.boot.projection;

import java.util.List;
import java.util.concurrent.CompletionStage;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;

import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.RecoveryStrategy;
import io.cassandrajournal.serialization.JacksonEventSerializer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;

/**
 * Discovery and validation of {@link ProjectionHandler} declarations (no Cassandra needed).
 */
class ProjectionHandlerMethodsTest {

	private static List<ProjectionDeclaration> discover(Class<?>... beans) {
		DefaultListableBeanFactory factory = new DefaultListableBeanFactory();
		for (Class<?> bean : beans) {
			factory.registerBeanDefinition(bean.getSimpleName(), new RootBeanDefinition(bean));
		}
		return ProjectionHandlerMethods.discover(factory, ProjectionSettings.defaults());
	}

	static class Good {

		@ProjectionHandler(name = "balances", tag = "account", recovery = "retry-and-skip", maxRetries = 5,
				retryBackoff = "2s", pollInterval = "250ms", concurrency = 4)
		void on(TestEvents.Deposited event) {
		}

		@ProjectionHandler(name = "balances", tag = "account")
		CompletionStage<Void> on(PersistentEvent<TestEvents.Withdrawn> event) {
			return null;
		}

		@ProjectionHandler(name = "audit", persistenceId = "account-1", autoStartup = false)
		void audit(PersistentEvent<Object> event) {
		}

	}

	@Test
	void methodsSharingANameFormOneProjectionWithItsSettings() {
		List<ProjectionDeclaration> declarations = discover(Good.class);
		assertThat(declarations).hasSize(2);
		ProjectionDeclaration balances = declarations.stream().filter((d) -> d.name().equals("balances")).findFirst().orElseThrow();
		assertThat(balances.tagFilter().canonical()).isEqualTo("account");
		assertThat(balances.methods()).extracting(HandlerMethod::payloadType)
			.containsExactlyInAnyOrder(TestEvents.Deposited.class, TestEvents.Withdrawn.class);
		assertThat(balances.settings().recoveryStrategy()).isEqualTo(RecoveryStrategy.RETRY_AND_SKIP);
		assertThat(balances.settings().maxRetries()).isEqualTo(5);
		assertThat(balances.settings().retryBackoff()).hasSeconds(2);
		assertThat(balances.settings().pollInterval()).hasMillis(250);
		assertThat(balances.settings().concurrency()).isEqualTo(4);
		assertThat(MethodDispatchingHandler.readType(List.of(TestEvents.Deposited.class, TestEvents.Withdrawn.class),
				new JacksonEventSerializer()))
			.as("read once as the sealed interface carrying @JsonTypeInfo")
			.isEqualTo(TestEvents.class);
		assertThat(MethodDispatchingHandler.readType(List.of(TestEvents.Deposited.class), new JacksonEventSerializer()))
			.isEqualTo(TestEvents.class);
		ProjectionDeclaration audit = declarations.stream().filter((d) -> d.name().equals("audit")).findFirst().orElseThrow();
		assertThat(audit.persistenceId()).isEqualTo("account-1");
		assertThat(audit.autoStartup()).isFalse();
		assertThat(audit.settings().concurrency()).as("the default").isEqualTo(1);
	}

	static class TwoParameters {

		@ProjectionHandler(name = "p", tag = "t")
		void on(TestEvents.Deposited a, String b) {
		}

	}

	static class PrimitiveParameter {

		@ProjectionHandler(name = "p", tag = "t")
		void on(long amount) {
		}

	}

	static class TagAndAny {

		@ProjectionHandler(name = "p", tag = "t", any = { "u" })
		void on(TestEvents.Deposited event) {
		}

	}

	static class NoSource {

		@ProjectionHandler(name = "p")
		void on(TestEvents.Deposited event) {
		}

	}

	static class BadReturn {

		@ProjectionHandler(name = "p", tag = "t")
		String on(TestEvents.Deposited event) {
			return "";
		}

	}

	static class BadRecovery {

		@ProjectionHandler(name = "p", tag = "t", recovery = "sometimes")
		void on(TestEvents.Deposited event) {
		}

	}

	static class FirstFilter {

		@ProjectionHandler(name = "shared", tag = "orders")
		void on(TestEvents.Deposited event) {
		}

	}

	static class OtherFilter {

		@ProjectionHandler(name = "shared", all = "orders")
		void on(TestEvents.Withdrawn event) {
		}

	}

	static class SameTypeTwice {

		@ProjectionHandler(name = "p", tag = "t")
		void one(TestEvents.Deposited event) {
		}

		@ProjectionHandler(name = "p", tag = "t")
		void two(PersistentEvent<TestEvents.Deposited> event) {
		}

	}

	@Test
	void badDeclarationsNameTheBeanTheMethodAndTheFix() {
		assertThatExceptionOfType(ProjectionDeclarationException.class).isThrownBy(() -> discover(TwoParameters.class))
			.withMessageContaining("TwoParameters.on").withMessageContaining("declare exactly one");
		assertThatExceptionOfType(ProjectionDeclarationException.class).isThrownBy(() -> discover(PrimitiveParameter.class))
			.withMessageContaining("PrimitiveParameter.on").withMessageContaining("not an event type");
		assertThatExceptionOfType(ProjectionDeclarationException.class).isThrownBy(() -> discover(TagAndAny.class))
			.withMessageContaining("both tag and any/all/not");
		assertThatExceptionOfType(ProjectionDeclarationException.class).isThrownBy(() -> discover(NoSource.class))
			.withMessageContaining("declares no source");
		assertThatExceptionOfType(ProjectionDeclarationException.class).isThrownBy(() -> discover(BadReturn.class))
			.withMessageContaining("return void or a CompletionStage");
		assertThatExceptionOfType(ProjectionDeclarationException.class).isThrownBy(() -> discover(BadRecovery.class))
			.withMessageContaining("sometimes").withMessageContaining("retry-and-fail");
		assertThatExceptionOfType(ProjectionDeclarationException.class)
			.isThrownBy(() -> discover(FirstFilter.class, OtherFilter.class))
			.withMessageContaining("OtherFilter.on")
			.withMessageContaining("tag filter 'all(orders)'")
			.withMessageContaining("tag filter 'orders'");
		assertThatExceptionOfType(ProjectionDeclarationException.class).isThrownBy(() -> discover(SameTypeTwice.class))
			.withMessageContaining("already has a handler for Deposited");
		assertThatExceptionOfType(ProjectionDeclarationException.class).isThrownBy(() -> discover(BadConcurrency.class))
			.withMessageContaining("BadConcurrency.on")
			.withMessageContaining("concurrency = \"-2\" is invalid")
			.withMessageContaining("between 1 and 256");
	}

	static class BadConcurrency {

		@ProjectionHandler(name = "p", tag = "t", concurrency = -2)
		void on(TestEvents.Deposited event) {
		}

	}

	static class Segmented {

		@ProjectionHandler(name = "orders", tag = "order", segments = 8)
		void on(TestEvents.Deposited event) {
		}

		@ProjectionHandler(name = "orders", tag = "order")
		void on(TestEvents.Withdrawn event) {
		}

		@ProjectionHandler(name = "plain", tag = "account")
		void plain(TestEvents.Deposited event) {
		}

		@ProjectionHandler(name = "one", persistenceId = "account-1")
		void one(PersistentEvent<Object> event) {
		}

	}

	@Test
	void segmentsComeFromTheAnnotationElseTheDefaultAndAreOneForAPersistenceId() {
		DefaultListableBeanFactory factory = new DefaultListableBeanFactory();
		factory.registerBeanDefinition("segmented", new RootBeanDefinition(Segmented.class));
		List<ProjectionDeclaration> declarations = ProjectionHandlerMethods.discover(factory,
				ProjectionSettings.defaults().withSegments(4));
		assertThat(declarations).extracting(ProjectionDeclaration::name, (d) -> d.settings().segments())
			.containsExactlyInAnyOrder(tuple("orders", 8),
					tuple("plain", 4), tuple("one", 1));
	}

	static class SegmentsNotAPowerOfTwo {

		@ProjectionHandler(name = "p", tag = "t", segments = 6)
		void on(TestEvents.Deposited event) {
		}

	}

	static class SegmentsOnAPersistenceId {

		@ProjectionHandler(name = "p", persistenceId = "account-1", segments = 4)
		void on(TestEvents.Deposited event) {
		}

	}

	static class SegmentsTwiceDifferent {

		@ProjectionHandler(name = "p", tag = "t", segments = 4)
		void on(TestEvents.Deposited event) {
		}

		@ProjectionHandler(name = "p", tag = "t", segments = 8)
		void on(TestEvents.Withdrawn event) {
		}

	}

	@Test
	void badSegmentsFailNamingBeanMethodAndRule() {
		assertThatExceptionOfType(ProjectionDeclarationException.class)
			.isThrownBy(() -> discover(SegmentsNotAPowerOfTwo.class))
			.withMessageContaining("SegmentsNotAPowerOfTwo.on")
			.withMessageContaining("segments = 6 is invalid")
			.withMessageContaining("power of two from 1 to 1024");
		assertThatExceptionOfType(ProjectionDeclarationException.class)
			.isThrownBy(() -> discover(SegmentsOnAPersistenceId.class))
			.withMessageContaining("SegmentsOnAPersistenceId.on")
			.withMessageContaining("reads one persistenceId ('account-1') and so has one segment");
		assertThatExceptionOfType(ProjectionDeclarationException.class)
			.isThrownBy(() -> discover(SegmentsTwiceDifferent.class))
			.withMessageContaining("sets segments = \"8\"")
			.withMessageContaining("set it once");
	}

}
