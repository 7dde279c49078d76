package io.cassandrajournal.spring.boot.it;

import java.net.InetSocketAddress;

import org.springframework.test.context.DynamicPropertyRegistry;

import io.cassandrajournal.testsupport.SharedCassandra;

/** Points an application under test at the JVM's shared node, in a fresh keyspace. */
final class SharedCassandraProperties {

	private SharedCassandraProperties() {
	}

	static void register(DynamicPropertyRegistry registry, String keyspaceHint) {
		registry.add("spring.cassandra.contact-points", () -> {
			InetSocketAddress point = SharedCassandra.contactPoints().get(0);
			return point.getHostString() + ":" + point.getPort();
		});
		registry.add("spring.cassandra.local-datacenter", () -> "datacenter1");
		registry.add("journal.cassandra.keyspace", () -> SharedCassandra.createKeyspace(keyspaceHint));
	}

}
