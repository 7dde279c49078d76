// The README's "without Spring" snippet, between the tags (ReadmeSnippetsTest keeps the README equal to them).
package io.cassandrajournal.docs;

// tag::plain-java[]
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.CassandraSessions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.serialization.JacksonEventSerializer;

// end::plain-java[]
final class PlainJavaSnippet {

	private PlainJavaSnippet() {
	}

	static void run() {
		// tag::plain-java[]
		CassandraJournalOptions options = CassandraJournalOptions.create()
		    .withContactPoints(List.of("cassandra-1:9042"))
		    .withLocalDatacenter("dc1")
		    .withKeyspace("my_app_events");
		CqlSession session = CassandraSessions.open(options);
		// First: record or check the layout, then build from what it returns (the keyspace's recorded settings).
		CassandraJournalOptions verified = CassandraJournal.verifyLayout(session, options);
		Journal journal = CassandraJournal.create(session, verified, new JacksonEventSerializer());
		journal.append("account-42", 0, List.of(EventToAppend.of(new Deposited(5), "account")));
		// end::plain-java[]
	}

}
