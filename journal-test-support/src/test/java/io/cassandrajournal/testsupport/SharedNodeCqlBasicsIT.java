package io.cassandrajournal.testsupport;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.BeforeEach;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link CqlBasicsContract} on the node started by the project's launcher.
 */
@CassandraTest
class SharedNodeCqlBasicsIT extends CqlBasicsContract {

	private CqlSession session;

	@BeforeEach
	void useKeyspace(TestKeyspace keyspace) {
		this.session = keyspace.session();
		assertThat(this.session.getKeyspace()).map(Object::toString).hasValue(keyspace.name());
	}

	@Override
	protected CqlSession session() {
		return this.session;
	}

}
