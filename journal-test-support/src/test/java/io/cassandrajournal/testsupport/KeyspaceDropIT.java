package io.cassandrajournal.testsupport;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

/**
 * {@link CassandraTest} drops each class's keyspace after the class: the shared node no longer holds every class's
 * tables to the end of the run. The sample class runs in a JUnit launcher of its own, so the test can look at the
 * node after that class's end.
 */
class KeyspaceDropIT {

	@Test
	void aClassKeyspaceIsDroppedAfterTheClassAndNotBefore() {
		TestExecutionSummary summary = run(SampleClass.class);
		assertThat(summary.getFailures()).as("the sample class's failures").isEmpty();
		assertThat(summary.getTestsSucceededCount()).as("its test and its nested class's test").isEqualTo(2);

		String name = SampleClass.keyspace;
		assertThat(name).isNotNull();
		assertThat(SampleClass.presentInNestedClass).as("the nested class shares the keyspace").isTrue();
		assertThat(SampleClass.presentInAfterAll).as("an @AfterAll method (after the nested class) still sees it")
			.isTrue();
		assertThat(exists(name)).as("dropped after the class").isFalse();
	}

	@Test
	void aDroppedKeyspaceNameCanBeCreatedAgainAndStartsEmpty() {
		TestExecutionSummary summary = run(SampleClass.class);
		assertThat(summary.getFailures()).isEmpty();
		String name = SampleClass.keyspace;
		assertThat(exists(name)).isFalse();

		CqlSession admin = SharedCassandra.adminSession();
		admin.execute("CREATE KEYSPACE " + name
				+ " WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1}");
		try (CqlSession session = TestSessions.open(SharedCassandra.contactPoints(), SharedCassandra.datacenter(),
				name)) {
			session.execute("CREATE TABLE t (k int PRIMARY KEY, v text)");
			assertThat(session.execute("SELECT k FROM t").all()).as("nothing of the dropped table comes back").isEmpty();
			session.execute("INSERT INTO t (k, v) VALUES (2, 'again')");
			assertThat(session.execute("SELECT v FROM t WHERE k = 2").one().getString("v")).isEqualTo("again");
		}
		finally {
			admin.execute("DROP KEYSPACE IF EXISTS " + name);
		}
		assertThat(exists(name)).isFalse();
	}

	private static TestExecutionSummary run(Class<?> testClass) {
		LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request()
			.selectors(selectClass(testClass))
			.build();
		SummaryGeneratingListener listener = new SummaryGeneratingListener();
		LauncherFactory.create().execute(request, listener);
		return listener.getSummary();
	}

	static boolean exists(String keyspace) {
		return SharedCassandra.adminSession()
			.execute("SELECT keyspace_name FROM system_schema.keyspaces WHERE keyspace_name = ?", keyspace)
			.one() != null;
	}

	/** Run by the tests above only (a nested class: failsafe does not pick it up by itself). */
	@CassandraTest
	static class SampleClass {

		static volatile String keyspace;

		static volatile boolean presentInNestedClass;

		static volatile boolean presentInAfterAll;

		@Test
		void writes(TestKeyspace testKeyspace, CqlSession session) {
			keyspace = testKeyspace.name();
			presentInNestedClass = false;
			presentInAfterAll = false;
			session.execute("CREATE TABLE t (k int PRIMARY KEY, v text)");
			session.execute("INSERT INTO t (k, v) VALUES (1, 'first')");
		}

		@AfterAll
		static void lookAtTheKeyspace() {
			presentInAfterAll = exists(keyspace);
		}

		@Nested
		class NestedClass {

			@Test
			void readsTheOuterClassesKeyspace(TestKeyspace testKeyspace, CqlSession session) {
				assertThat(testKeyspace.name()).isEqualTo(keyspace);
				assertThat(session.execute("SELECT v FROM t WHERE k = 1").one().getString("v")).isEqualTo("first");
				presentInNestedClass = true;
			}

		}

	}

}
