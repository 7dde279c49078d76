package io.cassandrajournal.journal;

import io.cassandrajournal.inmemory.InMemoryJournal;

class InMemoryJournalTest extends JournalContract {

	private final InMemoryJournal journal = new InMemoryJournal();

	@Override
	protected Journal journal() {
		return this.journal;
	}

}
