// The README's shared @ProjectionHandler snippet, between the tags (ReadmeSnippetsTest keeps the README equal to
// them). Not a @Component here, so that the quick-start tests' contexts do not pick it up.
package io.cassandrajournal.docs;

import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.spring.boot.projection.ProjectionHandler;

class SharedProjectionHandlerSnippet {

	// tag::shared-projection-handler[]
	@ProjectionHandler(name = "statements", tag = "account", segments = 16)   // 0 or unset: projections.segments
	void on(PersistentEvent<Deposited> event) {
	    // idempotent: after a crash or a hand-over the new owner may deliver the last batch again
	}
	// end::shared-projection-handler[]

}
