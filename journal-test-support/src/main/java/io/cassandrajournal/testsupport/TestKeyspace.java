package io.cassandrajournal.testsupport;

import java.net.InetSocketAddress;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;

/**
 * A fresh keyspace for one test class, with a session bound to it.
 *
 * @param name the keyspace name
 * @param session a session whose keyspace is {@code name}; closed after the test class
 * @param contactPoints where the node or cluster answers
 * @param datacenter the local data center
 */
public record TestKeyspace(String name, CqlSession session, List<InetSocketAddress> contactPoints,
		String datacenter) implements AutoCloseable {

	@Override
	public void close() {
		this.session.close();
	}

}
