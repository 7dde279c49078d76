package io.cassandrajournal.entity;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.journal.JournalConcurrencyException;
import io.cassandrajournal.snapshot.SnapshotStore;

/**
 * Loads event-sourced entities (latest snapshot plus the events after it) and runs commands against them:
 * the command sees the current state and returns the events to append; they are appended with the loaded
 * sequence number as expected head. If another writer got there first ({@link JournalConcurrencyException}),
 * the entity is reloaded and the command runs again, up to {@code maxRetries} more times.
 * <p>
 * A command rejects by throwing: the exception fails the returned stage unchanged and nothing is appended.
 * <p>
 * {@link #withCache(int)} keeps the state of recently used entities in memory, so a command on a hot entity
 * skips the load (snapshot read, head read, replay) and goes straight to its append. The cache is never
 * trusted on its own: the append's expected sequence number (a lightweight transaction) rejects a stale
 * state, which is then reloaded and the command run again; and a command that rejects or appends nothing
 * on cached state runs once more on freshly loaded state before its answer is returned, so another
 * process's writes can never make a command fail that would succeed.
 *
 * @param <S> the state type
 * @param <E> the event type
 */
public final class EntityRepository<S, E> {

	private static final Logger logger = LoggerFactory.getLogger(EntityRepository.class);

	private final Journal journal;

	private final @Nullable SnapshotStore snapshots;

	private final EventSourcedEntity<S, E> entity;

	private final int maxRetries;

	private final int cacheSize;

	/** Access-ordered, bounded; guarded by itself. Empty when {@code cacheSize} is 0. */
	private final LinkedHashMap<String, EntityState<S>> cache;

	private EntityRepository(Journal journal, @Nullable SnapshotStore snapshots, EventSourcedEntity<S, E> entity,
			int maxRetries, int cacheSize) {
		this.journal = journal;
		this.snapshots = snapshots;
		this.entity = entity;
		this.maxRetries = maxRetries;
		this.cacheSize = cacheSize;
		this.cache = new LinkedHashMap<>(16, 0.75f, true) {

			private static final long serialVersionUID = 1L;

			@Override
			protected boolean removeEldestEntry(Map.Entry<String, EntityState<S>> eldest) {
				return size() > EntityRepository.this.cacheSize;
			}

		};
	}

	/**
	 * @param maxEntities how many entities' states to keep in memory (least recently used go first); 0
	 * turns the cache off
	 * @return a repository over the same journal and entity with that cache (see the class description
	 * for why a stale entry is harmless)
	 */
	public EntityRepository<S, E> withCache(int maxEntities) {
		if (maxEntities < 0) {
			throw new IllegalArgumentException("maxEntities must be 0 or more, was " + maxEntities);
		}
		return new EntityRepository<>(this.journal, this.snapshots, this.entity, this.maxRetries, maxEntities);
	}

	private @Nullable EntityState<S> cached(String persistenceId) {
		if (this.cacheSize == 0) {
			return null;
		}
		synchronized (this.cache) {
			return this.cache.get(persistenceId);
		}
	}

	private void remember(EntityState<S> state) {
		if (this.cacheSize == 0) {
			return;
		}
		synchronized (this.cache) {
			EntityState<S> known = this.cache.get(state.persistenceId());
			if (known == null || known.sequenceNr() <= state.sequenceNr()) {
				this.cache.put(state.persistenceId(), state);
			}
		}
	}

	private void forget(String persistenceId) {
		if (this.cacheSize == 0) {
			return;
		}
		synchronized (this.cache) {
			this.cache.remove(persistenceId);
		}
	}

	/**
	 * @param <S> the state type
	 * @param <E> the event type
	 * @param journal the journal
	 * @param snapshots the snapshot store, or {@code null} to replay every event on load
	 * @param entity the entity definition
	 * @param maxRetries how many times a command is retried after a concurrency conflict (3 is typical)
	 * @return the repository
	 */
	public static <S, E> EntityRepository<S, E> create(Journal journal, @Nullable SnapshotStore snapshots,
			EventSourcedEntity<S, E> entity, int maxRetries) {
		Objects.requireNonNull(journal, "journal");
		Objects.requireNonNull(entity, "entity");
		if (maxRetries < 0) {
			throw new IllegalArgumentException("maxRetries must be 0 or more, was " + maxRetries);
		}
		if (entity.snapshotEvery() > 0 && snapshots == null) {
			throw new IllegalArgumentException("entity " + entity.getClass().getName()
					+ " takes snapshots (snapshotEvery > 0) but no SnapshotStore was given");
		}
		return new EntityRepository<>(journal, snapshots, entity, maxRetries, 0);
	}

	/**
	 * @param persistenceId the entity
	 * @return its current state; the empty state at sequence number 0 if it has no events
	 */
	public CompletionStage<EntityState<S>> load(String persistenceId) {
		return loadFromJournal(persistenceId).thenApply((state) -> {
			remember(state);
			return state;
		});
	}

	private CompletionStage<EntityState<S>> loadFromJournal(String persistenceId) {
		CompletionStage<EntityState<S>> start = (this.snapshots != null && this.entity.snapshotEvery() > 0)
				? this.snapshots.loadLatest(persistenceId, Long.MAX_VALUE, this.entity.stateType())
					.thenApply((snapshot) -> snapshot
						.map((s) -> new EntityState<>(persistenceId, s.sequenceNr(), s.state()))
						.orElseGet(() -> new EntityState<>(persistenceId, 0, this.entity.emptyState())))
				: CompletableFuture.completedFuture(new EntityState<>(persistenceId, 0, this.entity.emptyState()));
		return start.thenCompose((initial) -> this.journal.highestSequenceNr(persistenceId).thenCompose((head) -> {
			AtomicReference<S> state = new AtomicReference<>(initial.state());
			if (head <= initial.sequenceNr()) {
				return CompletableFuture.completedFuture(new EntityState<>(persistenceId, Math.max(head, initial.sequenceNr()),
						initial.state()));
			}
			return this.journal
				.replay(persistenceId, initial.sequenceNr() + 1, head, this.entity.eventType(),
						(event) -> state.set(this.entity.applyEvent(state.get(), event.payload())))
				.thenApply((last) -> new EntityState<>(persistenceId, head, state.get()));
		}));
	}

	/**
	 * Runs a command: load, decide, append; on a concurrency conflict reload and run again.
	 * @param persistenceId the entity
	 * @param command decides the events from the current state; throws to reject
	 * @return the new state and the appended events; fails with the command's exception, with
	 * {@link JournalConcurrencyException} when every retry lost, or with the journal's errors
	 */
	public CompletionStage<CommandResult<S, E>> execute(String persistenceId,
			Function<? super EntityState<S>, ? extends List<? extends E>> command) {
		// The command's own exception (a rejection) fails the stage unchanged, not wrapped.
		return attempt(persistenceId, command, 1).exceptionallyCompose((error) -> {
			Throwable cause = Errors.unwrap(error);
			return CompletableFuture.failedFuture((cause instanceof RuntimeException) ? cause
					: new CompletionException(cause));
		});
	}

	private CompletionStage<CommandResult<S, E>> attempt(String persistenceId,
			Function<? super EntityState<S>, ? extends List<? extends E>> command, int attempt) {
		EntityState<S> hit = (attempt == 1) ? cached(persistenceId) : null;
		if (hit != null) {
			return decideOnCached(hit, command);
		}
		return load(persistenceId).thenCompose((current) -> decide(current, command, attempt));
	}

	/**
	 * A cached state may be stale: an append on it is checked by the journal, but a rejection or an empty
	 * decision is not, so those run again on fresh state.
	 */
	private CompletionStage<CommandResult<S, E>> decideOnCached(EntityState<S> cached,
			Function<? super EntityState<S>, ? extends List<? extends E>> command) {
		List<E> events;
		try {
			events = List.copyOf(command.apply(cached));
		}
		catch (RuntimeException rejected) {
			forget(cached.persistenceId());
			return attempt(cached.persistenceId(), command, 2);
		}
		if (events.isEmpty()) {
			return attempt(cached.persistenceId(), command, 2);
		}
		return append(cached, events, 1, command);
	}

	private CompletionStage<CommandResult<S, E>> decide(EntityState<S> current,
			Function<? super EntityState<S>, ? extends List<? extends E>> command, int attempt) {
		List<E> events = List.copyOf(command.apply(current));
		if (events.isEmpty()) {
			return CompletableFuture.completedFuture(new CommandResult<>(current, events, attempt));
		}
		return append(current, events, attempt, command);
	}

	private CompletionStage<CommandResult<S, E>> append(EntityState<S> current, List<E> events, int attempt,
			Function<? super EntityState<S>, ? extends List<? extends E>> command) {
		String persistenceId = current.persistenceId();
		List<EventToAppend> toAppend = new ArrayList<>(events.size());
		S state = current.state();
		for (E event : events) {
			toAppend.add(new EventToAppend(event, this.entity.tagsFor(event)));
			state = this.entity.applyEvent(state, event);
		}
		S newState = state;
		return this.journal.append(persistenceId, current.sequenceNr(), toAppend).thenApply((result) -> {
			EntityState<S> after = new EntityState<>(persistenceId, result.lastSequenceNr(), newState);
			remember(after);
			maybeSnapshot(current.sequenceNr(), after);
			return new CommandResult<>(after, events, attempt);
		}).exceptionallyCompose((error) -> retryOnConflict(persistenceId, command, attempt, error));
	}

	private CompletionStage<CommandResult<S, E>> retryOnConflict(String persistenceId,
			Function<? super EntityState<S>, ? extends List<? extends E>> command, int attempt, Throwable error) {
		Throwable cause = Errors.unwrap(error);
		if (cause instanceof JournalConcurrencyException) {
			forget(persistenceId);
			if (attempt <= this.maxRetries) {
				logger.debug("Conflict on '{}' (attempt {}), reloading", persistenceId, attempt);
				return attempt(persistenceId, command, attempt + 1);
			}
		}
		return CompletableFuture.failedFuture(cause);
	}

	private void maybeSnapshot(long before, EntityState<S> after) {
		int every = this.entity.snapshotEvery();
		if (every <= 0 || this.snapshots == null || after.sequenceNr() / every == before / every) {
			return;
		}
		this.snapshots.save(after.persistenceId(), after.sequenceNr(), after.state()).whenComplete((ok, error) -> {
			if (error != null) {
				logger.warn("Snapshot of '{}' at {} failed; the next load replays more events", after.persistenceId(),
						after.sequenceNr(), Errors.unwrap(error));
			}
		});
	}

}
