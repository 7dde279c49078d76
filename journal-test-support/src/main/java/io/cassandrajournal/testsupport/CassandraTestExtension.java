package io.cassandrajournal.testsupport;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The extension behind {@link CassandraTest}: one keyspace per test class, created before the first test and
 * dropped after the class (after its {@code @AfterAll} methods and its {@code @Nested} classes, which share it).
 * Keyspaces a test creates itself ({@link SharedCassandra#createKeyspace}) are left to that test.
 */
public final class CassandraTestExtension implements BeforeAllCallback, ParameterResolver {

	private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace
		.create(CassandraTestExtension.class);

	@Override
	public void beforeAll(ExtensionContext context) {
		keyspace(context);
	}

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Class<?> type = parameterContext.getParameter().getType();
		return type == TestKeyspace.class || type == CqlSession.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		TestKeyspace keyspace = keyspace(extensionContext);
		return (parameterContext.getParameter().getType() == CqlSession.class) ? keyspace.session() : keyspace;
	}

	private static TestKeyspace keyspace(ExtensionContext context) {
		Class<?> testClass = context.getRequiredTestClass();
		while (testClass.getEnclosingClass() != null && testClass.getAnnotation(CassandraTest.class) == null) {
			testClass = testClass.getEnclosingClass();
		}
		Class<?> owner = testClass;
		// Stored at class level (method and nested-class contexts see their parent's values): closed, and the keyspace
		// dropped, when the owning class's context closes.
		return context.getStore(NAMESPACE)
			.computeIfAbsent(owner, (key) -> new ClassKeyspace(create(owner)), ClassKeyspace.class)
			.keyspace();
	}

	private static TestKeyspace create(Class<?> testClass) {
		String name = SharedCassandra.createKeyspace(testClass.getSimpleName());
		CqlSession session = TestSessions.open(SharedCassandra.contactPoints(), SharedCassandra.datacenter(), name);
		return new TestKeyspace(name, session, SharedCassandra.contactPoints(), SharedCassandra.datacenter());
	}

	/**
	 * A test class's keyspace, owned by the extension: closing it closes the session and drops the keyspace. Every
	 * class used to leave its keyspace on the shared node to the end of the run; each table costs the node heap,
	 * and the node was lost near the end of journal-core's integration tests (2026-12-02).
	 */
	private record ClassKeyspace(TestKeyspace keyspace) implements AutoCloseable {

		@Override
		public void close() {
			try {
				this.keyspace.close();
			}
			finally {
				SharedCassandra.dropKeyspace(this.keyspace.name());
			}
		}

	}

}
