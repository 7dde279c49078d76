// The README's "Running several instances" snippet, between the tags (ReadmeSnippetsTest keeps the README equal
// to them).
package io.cassandrajournal.docs;

// tag::shared-projection[]
import java.time.Duration;

import com.datastax.oss.driver.api.core.CqlSession;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.projection.DurableStateOffsetStore;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.ProjectionSharing;
import io.cassandrajournal.query.ReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.state.DurableStateStore;

// end::shared-projection[]
final class SharedProjectionSnippet {

	private SharedProjectionSnippet() {
	}

	static ProjectionEngine build(CqlSession session, CassandraJournalOptions options, Journal journal,
			ReadJournal readJournal, DurableStateStore durableStateStore, EventHandler<AccountEvent> handler) {
		// tag::shared-projection[]
		ProjectionEngine engine = ProjectionEngine.builder(journal)
		    .readJournal(readJournal)
		    .offsetStore(new DurableStateOffsetStore(durableStateStore))   // required: cursors are fenced
		    .sharing(ProjectionSharing.create(session, options)
		        .withInstanceId("orders-7f9c")                             // default: a random UUID per engine
		        .withLeaseTiming(Duration.ofSeconds(10), Duration.ofSeconds(2)))   // the defaults
		    .build();
		engine.register(Projection.byTag("balances", TagFilter.tag("account"), AccountEvent.class, handler,
		    ProjectionSettings.defaults().withSegments(8)));
		// end::shared-projection[]
		return engine;
	}

}
