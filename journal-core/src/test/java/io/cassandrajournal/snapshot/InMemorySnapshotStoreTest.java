package io.cassandrajournal.snapshot;

import io.cassandrajournal.inmemory.InMemorySnapshotStore;

class InMemorySnapshotStoreTest extends SnapshotStoreContract {

	private final InMemorySnapshotStore store = new InMemorySnapshotStore();

	@Override
	protected SnapshotStore store() {
		return this.store;
	}

}
