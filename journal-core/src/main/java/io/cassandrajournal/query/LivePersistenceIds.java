package io.cassandrajournal.query;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.cassandrajournal.journal.AppendListener;
import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.Journal;

/**
 * The live stream of persistenceIds: every known id, then each new one as it first appears. Each
 * {@link #poll()} lists the ids page by page and returns those not seen before; ids appended by this process
 * are also announced at once through the journal's append listener. It remembers every id it has emitted,
 * so it is meant for hundreds or thousands of long-lived entities (fan-out), not millions.
 * <p>
 * Bounds: the ids announced by appends between two polls are held up to a cap ({@value #MAX_ANNOUNCED} by
 * default); announcements beyond it are dropped, which costs nothing but latency, because the append wrote the
 * id's {@code all_persistence_ids} row before it completed and the next poll's listing finds it.
 * {@link #close()} removes the append listener; a closed stream still lists ids when polled.
 */
public final class LivePersistenceIds implements AutoCloseable {

	/** Announced ids held between two polls at most, by default. */
	static final int MAX_ANNOUNCED = 10_000;

	private final Journal journal;

	private final int pageSize;

	private final int maxAnnounced;

	private final Set<String> seen = new HashSet<>();

	private final Set<String> announced = ConcurrentHashMap.newKeySet();

	private final AppendListener listener = this::announce;

	private final AtomicBoolean closed = new AtomicBoolean();

	LivePersistenceIds(Journal journal, int pageSize) {
		this(journal, pageSize, MAX_ANNOUNCED);
	}

	LivePersistenceIds(Journal journal, int pageSize, int maxAnnounced) {
		this.journal = journal;
		this.pageSize = pageSize;
		this.maxAnnounced = maxAnnounced;
		journal.addAppendListener(this.listener);
	}

	private void announce(AppendResult result) {
		// The size check races with other appends by a few ids at most; the cap is a memory bound, not exact.
		if (result.firstSequenceNr() == 1 && this.announced.size() < this.maxAnnounced) {
			this.announced.add(result.persistenceId());
		}
	}

	/** @return ids not emitted before (possibly none) */
	public CompletionStage<List<String>> poll() {
		List<String> fresh = new ArrayList<>();
		return page(null, fresh).thenApply((ignored) -> {
			synchronized (this) {
				// Ids announced before the listing started are in it; those announced during it are taken here.
				for (String id : List.copyOf(this.announced)) {
					this.announced.remove(id);
					if (this.seen.add(id)) {
						fresh.add(id);
					}
				}
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

	/** Stops listening to the journal's appends (idempotent); new ids are then found by the listing only. */
	@Override
	public void close() {
		if (this.closed.compareAndSet(false, true)) {
			this.journal.removeAppendListener(this.listener);
			this.announced.clear();
		}
	}

	/** @return announced ids waiting for the next poll */
	int announcedPending() {
		return this.announced.size();
	}

}
