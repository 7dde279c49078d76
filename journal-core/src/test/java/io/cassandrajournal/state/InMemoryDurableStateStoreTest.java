package io.cassandrajournal.state;

import io.cassandrajournal.inmemory.InMemoryDurableStateStore;

class InMemoryDurableStateStoreTest extends DurableStateStoreContract {

	private final InMemoryDurableStateStore store = new InMemoryDurableStateStore();

	@Override
	protected DurableStateStore store() {
		return this.store;
	}

}
