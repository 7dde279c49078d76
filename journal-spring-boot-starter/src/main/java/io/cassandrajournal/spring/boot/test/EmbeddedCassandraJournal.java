package io.cassandrajournal.spring.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.test.context.TestPropertySource;

/**
 * Runs a {@code @SpringBootTest} against a real Cassandra node the project starts itself, without Docker:
 * a temporary node on a free port (started once per JVM and shared by every test context, wiped when the
 * JVM exits), with the keyspace from {@code journal.cassandra.keyspace} created on it. The same as setting
 * {@code journal.cassandra.embedded.enabled=true}, {@code journal.cassandra.embedded.temporary=true} and
 * {@code journal.cassandra.embedded.port=0}; the test's own properties still apply.
 *
 * <pre>{@code
 * @SpringBootTest(properties = "journal.cassandra.keyspace=orders_test")
 * @EmbeddedCassandraJournal
 * class OrderProjectionTests { ... }
 * }</pre>
 *
 * Needs {@code io.cassandrajournal:cassandra-launcher} on the test class path. With Docker, a
 * Testcontainers {@code CassandraContainer} with {@code @ServiceConnection} works too: the journal uses the
 * session Spring Boot builds from it.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@TestPropertySource(properties = { "journal.cassandra.embedded.enabled=true", "journal.cassandra.embedded.temporary=true",
		"journal.cassandra.embedded.port=0" })
public @interface EmbeddedCassandraJournal {

}
