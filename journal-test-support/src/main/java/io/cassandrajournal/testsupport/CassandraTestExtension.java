package io.cassandrajournal.testsupport;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The extension behind {@link CassandraTest}: one keyspace per test class, created before the first test.
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
		// Stored at class level (method contexts see their parent's values): the session closes after the class.
		return context.getStore(NAMESPACE)
			.computeIfAbsent(owner, (key) -> create(owner), TestKeyspace.class);
	}

	private static TestKeyspace create(Class<?> testClass) {
		String name = SharedCassandra.createKeyspace(testClass.getSimpleName());
		CqlSession session = TestSessions.open(SharedCassandra.contactPoints(), SharedCassandra.datacenter(), name);
		return new TestKeyspace(name, session, SharedCassandra.contactPoints(), SharedCassandra.datacenter());
	}

}
