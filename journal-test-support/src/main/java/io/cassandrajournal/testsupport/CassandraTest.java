package io.cassandrajournal.testsupport;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Runs a test class against the JVM's shared real Cassandra node (see {@link SharedCassandra}) in a fresh
 * keyspace. Test methods, constructors and lifecycle methods may take a {@link TestKeyspace} or a
 * {@link com.datastax.oss.driver.api.core.CqlSession} (bound to that keyspace) as parameters.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ExtendWith(CassandraTestExtension.class)
public @interface CassandraTest {

}
