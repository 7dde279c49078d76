package io.cassandrajournal.benchmarks;

import io.cassandrajournal.journal.CassandraJournal;

/** Reaches the LWT journal of the append workloads for the warm-up. */
final class CassandraJournalAccess {

	private CassandraJournalAccess() {
	}

	static CassandraJournal lwt(AppendWorkloads appends) {
		return appends.lwtJournal();
	}

}
