// The README's testing snippet, between the tags (ReadmeSnippetsTest keeps the README equal to them). Compiled by
// the build only: it has no test of its own (the sample's ITs run @EmbeddedCassandraJournal-style contexts).
package io.cassandrajournal.docs;

// tag::testing[]
import org.springframework.boot.test.context.SpringBootTest;

import io.cassandrajournal.spring.boot.test.EmbeddedCassandraJournal;

@SpringBootTest(properties = "journal.cassandra.keyspace=orders_test")
@EmbeddedCassandraJournal
class OrderProjectionTests {
    // your @Test methods: the context's journal, projections and repositories run on a real node
}
// end::testing[]
