package io.cassandrajournal.query;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import io.cassandrajournal.journal.Journal;

/**
 * The live stream of persistenceIds: every known id, then each new one as it first appears. Each
 * {@link #poll()} lists the ids page by page and returns those not seen before; ids appended by this process
 * are also announced at once through the journal's append listener. It remembers every id it has emitted,
 * so it is meant for hundreds or thousands of long-lived entities (fan-out), not millions.
 */
public final class LivePersistenceIds {

	private final Journal journal;

	private final int pageSize;

	private final Set<String> seen = new HashSet<>();

	private final Set<String> announced = java.util.concurrent.ConcurrentHashMap.newKeySet();

	LivePersistenceIds(Journal journal, int pageSize) {
		this.journal = journal;
		this.pageSize = pageSize;
		journal.addAppendListener((result) -> {
			if (result.firstSequenceNr() == 1) {
				this.announced.add(result.persistenceId());
			}
		});
	}

	/** @return ids not emitted before (possibly none) */
	public CompletionStage<List<String>> poll() {
		List<String> fresh = new ArrayList<>();
		return page(null, fresh).thenApply((ignored) -> {
			synchronized (this) {
				for (String id : this.announced) {
					if (this.seen.add(id)) {
						fresh.add(id);
					}
				}
				this.announced.clear();
			}
			return fresh;
		});
	}

	private CompletionStage<Void> page(String after, List<String> fresh) {
		return this.journal.persistenceIds(after, this.pageSize).thenCompose((ids) -> {
			synchronized (this) {
				for (String id : ids) {
					if (this.seen.add(id)) {
						fresh.add(id);
					}
				}
			}
			return (ids.size() < this.pageSize) ? CompletableFuture.<Void>completedFuture(null)
					: page(ids.get(ids.size() - 1), fresh);
		});
	}

}
