package io.cassandrajournal.entity;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.internal.Errors;
import io.cassandrajournal.journal.ConsistencyReport.SequenceRange;
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
 * <b>Never on stale state.</b> A load folds the latest readable snapshot (one in another shape, such as the
 * TypeScript implementation's, is stepped over) and then the events up to the head through
 * {@link Journal#replayContiguous}: events another writer has claimed but not yet made visible are waited for
 * (bounded by the journal's in-flight wait, default 30 s), and only numbers still missing after that are
 * stepped over as a crash gap. The state is labelled with what it folded, so it is never cached, snapshotted or
 * appended to as if it were newer.
 * <p>
 * <b>Never without deleted events.</b> A load whose fold would start below the journal's deletion mark (events a
 * {@code deleteTo} or a retention cleanup removed, with no readable snapshot at or after them) fails with
 * {@link EventsDeletedException}, naming the entity and the deleted range, instead of folding a partial state
 * (docs/reliability.md, finding 19).
 * <p>
 * <b>Threads.</b> Commands, {@link EventSourcedEntity#applyEvent} and {@link EventSourcedEntity#tagsFor} run on
 * the repository's executor ({@link #withExecutor(Executor)}), never on a Cassandra driver I/O thread, so a
 * command that blocks briefly does not stall the driver.
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

	/** Events read and folded per step of a load: bounds the memory of a long replay. */
	private static final int LOAD_CHUNK = 1000;

	private final Journal journal;

	private final @Nullable SnapshotStore snapshots;

	private final EventSourcedEntity<S, E> entity;

	private final int maxRetries;

	private final int cacheSize;

	private final Executor executor;

	private final SnapshotRetention retention;

	/** Access-ordered, bounded; guarded by itself. Empty when {@code cacheSize} is 0. */
	private final LinkedHashMap<String, EntityState<S>> cache;

	private EntityRepository(Journal journal, @Nullable SnapshotStore snapshots, EventSourcedEntity<S, E> entity,
			int maxRetries, int cacheSize, Executor executor, SnapshotRetention retention) {
		this.journal = journal;
		this.executor = executor;
		this.retention = retention;
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
		return new EntityRepository<>(this.journal, this.snapshots, this.entity, this.maxRetries, maxEntities,
				this.executor, this.retention);
	}

	/**
	 * @param executor where commands, {@link EventSourcedEntity#applyEvent} and {@link EventSourcedEntity#tagsFor}
	 * run (never on the Cassandra driver's I/O threads). The default is a shared pool of daemon threads named
	 * {@code journal-entity-N} (twice the processors, at least 4): supply your own when commands block for
	 * long (remote calls), so they cannot starve other repositories
	 * @return a repository over the same journal and entity running user code there
	 */
	public EntityRepository<S, E> withExecutor(Executor executor) {
		Objects.requireNonNull(executor, "executor");
		return new EntityRepository<>(this.journal, this.snapshots, this.entity, this.maxRetries, this.cacheSize,
				executor, this.retention);
	}

	/**
	 * Snapshot retention, after Akka's retention criteria: once a snapshot at sequence number {@code S} is
	 * written, snapshots up to {@code S - keepSnapshots x snapshotEvery} are deleted and, with
	 * {@code deleteEvents}, the events up to that number too ({@link Journal#deleteTo}, after the snapshots'
	 * save succeeded, in the background; a failure is logged and the next snapshot tries again). The snapshots of
	 * the last {@code keepSnapshots x snapshotEvery} events stay: {@code keepSnapshots} of them when every
	 * snapshot was written, at least the one just written. A load starts at the newest readable snapshot, which
	 * is above the deleted range, so no load ever needs a deleted event. Tag projections and per-entity
	 * projections that had not read the deleted events yet never will (README "Retention").
	 * @param keepSnapshots snapshot intervals kept, at least 1; 0 turns retention off (the default)
	 * @param deleteEvents whether to delete the events below the kept snapshots too
	 * @return a repository over the same journal and entity with that retention
	 * @throws IllegalArgumentException if {@code keepSnapshots} is negative, or positive for an entity that takes
	 * no snapshots
	 */
	public EntityRepository<S, E> withSnapshotRetention(int keepSnapshots, boolean deleteEvents) {
		if (keepSnapshots < 0) {
			throw new IllegalArgumentException("keepSnapshots must be 0 (off) or more, was " + keepSnapshots);
		}
		if (keepSnapshots > 0 && (this.entity.snapshotEvery() <= 0 || this.snapshots == null)) {
			throw new IllegalArgumentException("entity " + this.entity.getClass().getName()
					+ " takes no snapshots (snapshotEvery <= 0 or no SnapshotStore): snapshot retention needs them");
		}
		return new EntityRepository<>(this.journal, this.snapshots, this.entity, this.maxRetries, this.cacheSize,
				this.executor, new SnapshotRetention(keepSnapshots, deleteEvents && keepSnapshots > 0));
	}

	/** Retention after a snapshot: see {@link #withSnapshotRetention}. */
	private record SnapshotRetention(int keepSnapshots, boolean deleteEvents) {

		static final SnapshotRetention OFF = new SnapshotRetention(0, false);

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
		return new EntityRepository<>(journal, snapshots, entity, maxRetries, 0, DefaultExecutor.INSTANCE,
				SnapshotRetention.OFF);
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

	/**
	 * The latest readable snapshot, then the events after it in chunks, each folded on the executor. The
	 * journal's contiguous replay waits for events another writer has claimed but not yet made visible (and
	 * steps over crash gaps), so the state is labelled with exactly what it folded: an append with it as
	 * expected sequence number is checked against the state the command saw.
	 */
	private CompletionStage<EntityState<S>> loadFromJournal(String persistenceId) {
		return startingPoint(persistenceId).thenCompose(this::foldFrom);
	}

	private CompletionStage<EntityState<S>> startingPoint(String persistenceId) {
		EntityState<S> empty = new EntityState<>(persistenceId, 0, this.entity.emptyState());
		if (this.snapshots == null || this.entity.snapshotEvery() <= 0) {
			return CompletableFuture.completedFuture(empty);
		}
		return this.snapshots.loadLatest(persistenceId, Long.MAX_VALUE, this.entity.stateType())
			.handle((snapshot, error) -> {
				if (error == null) {
					return snapshot.map((s) -> new EntityState<>(persistenceId, s.sequenceNr(), s.state())).orElse(empty);
				}
				Throwable cause = Errors.unwrap(error);
				if (cause instanceof JournalSerializationException) {
					// A store that does not step over unreadable snapshots itself: the events still hold the state.
					logger.warn("Snapshot of '{}' cannot be read as {} ({}); replaying its events", persistenceId,
							this.entity.stateType().getName(), cause.getMessage());
					return empty;
				}
				throw new CompletionException(cause);
			});
	}

	private CompletionStage<EntityState<S>> foldFrom(EntityState<S> from) {
		String persistenceId = from.persistenceId();
		long first = from.sequenceNr() + 1;
		long last = (from.sequenceNr() > Long.MAX_VALUE - LOAD_CHUNK) ? Long.MAX_VALUE : from.sequenceNr() + LOAD_CHUNK;
		List<E> events = new ArrayList<>();
		return this.journal
			.replayContiguous(persistenceId, first, last, this.entity.eventType(), (event) -> events.add(event.payload()))
			.thenApplyAsync((replayed) -> {
				SequenceRange deleted = replayed.deleted();
				if (deleted != null) {
					// Events a cleanup deleted and no snapshot covers: a fold without them is wrong (finding 19).
					throw new EventsDeletedException(persistenceId, deleted, from.sequenceNr());
				}
				S state = from.state();
				for (E event : events) {
					state = this.entity.applyEvent(state, event);
				}
				EntityState<S> folded = new EntityState<>(persistenceId, Math.max(from.sequenceNr(), replayed.coveredTo()),
						state);
				boolean more = replayed.coveredTo() < replayed.head() && replayed.coveredTo() > from.sequenceNr();
				return more ? foldFrom(folded) : CompletableFuture.completedFuture(folded);
			}, this.executor)
			.thenCompose((next) -> next);
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
		return load(persistenceId)
			.thenApplyAsync((current) -> new Decision<>(current, decide(current, command)), this.executor)
			.thenCompose((decision) -> decision.decided().events().isEmpty()
					? CompletableFuture.completedFuture(
							new CommandResult<>(decision.current(), decision.decided().events(), attempt))
					: append(decision.current(), decision.decided(), attempt, command));
	}

	/**
	 * A cached state may be stale: an append on it is checked by the journal, but a rejection or an empty
	 * decision is not, so those run again on fresh state.
	 */
	private CompletionStage<CommandResult<S, E>> decideOnCached(EntityState<S> cached,
			Function<? super EntityState<S>, ? extends List<? extends E>> command) {
		String persistenceId = cached.persistenceId();
		return CompletableFuture.supplyAsync(() -> decide(cached, command), this.executor)
			.handle((decided, error) -> {
				if (error != null) {
					if (!(Errors.unwrap(error) instanceof RuntimeException)) {
						return CompletableFuture.<CommandResult<S, E>>failedFuture(Errors.unwrap(error));
					}
					forget(persistenceId);
					return attempt(persistenceId, command, 2);
				}
				if (decided.events().isEmpty()) {
					return attempt(persistenceId, command, 2);
				}
				return append(cached, decided, 1, command);
			})
			.thenCompose((next) -> next);
	}

	/** Runs the user's code (command, tags, event handler): always on the executor. */
	private Decided<S, E> decide(EntityState<S> current,
			Function<? super EntityState<S>, ? extends List<? extends E>> command) {
		List<E> events = List.copyOf(command.apply(current));
		List<EventToAppend> toAppend = new ArrayList<>(events.size());
		S state = current.state();
		for (E event : events) {
			toAppend.add(new EventToAppend(event, this.entity.tagsFor(event)));
			state = this.entity.applyEvent(state, event);
		}
		return new Decided<>(events, toAppend, state);
	}

	private CompletionStage<CommandResult<S, E>> append(EntityState<S> current, Decided<S, E> decided, int attempt,
			Function<? super EntityState<S>, ? extends List<? extends E>> command) {
		String persistenceId = current.persistenceId();
		return this.journal.append(persistenceId, current.sequenceNr(), decided.toAppend()).thenApply((result) -> {
			EntityState<S> after = new EntityState<>(persistenceId, result.lastSequenceNr(), decided.state());
			remember(after);
			maybeSnapshot(current.sequenceNr(), after);
			return new CommandResult<>(after, decided.events(), attempt);
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
		SnapshotStore store = this.snapshots;
		store.save(after.persistenceId(), after.sequenceNr(), after.state()).whenComplete((ok, error) -> {
			if (error != null) {
				logger.warn("Snapshot of '{}' at {} failed; the next load replays more events", after.persistenceId(),
						after.sequenceNr(), Errors.unwrap(error));
			}
			else {
				applyRetention(store, after.persistenceId(), after.sequenceNr(), every);
			}
		});
	}

	/** After a snapshot at {@code snapshotAt} was written: see {@link #withSnapshotRetention}. */
	private void applyRetention(SnapshotStore store, String persistenceId, long snapshotAt, int every) {
		long cut = snapshotAt - (long) this.retention.keepSnapshots() * every;
		if (this.retention.keepSnapshots() == 0 || cut <= 0) {
			return;
		}
		CompletionStage<Void> events = this.retention.deleteEvents() ? this.journal.deleteTo(persistenceId, cut)
				: CompletableFuture.completedFuture(null);
		events.thenCompose((ignored) -> store.deleteOlderThan(persistenceId, cut + 1)).whenComplete((ok, error) -> {
			if (error != null) {
				logger.warn("Retention after the snapshot of '{}' at {} failed (events and snapshots up to {}); the "
						+ "next snapshot tries again", persistenceId, snapshotAt, cut, Errors.unwrap(error));
			}
		});
	}

	/** What a command decided: its events, as appended, and the state after them. */
	private record Decided<S, E>(List<E> events, List<EventToAppend> toAppend, S state) {
	}

	private record Decision<S, E>(EntityState<S> current, Decided<S, E> decided) {
	}

	/** The default executor: shared, daemon threads, so it needs no shutdown. */
	private static final class DefaultExecutor {

		static final Executor INSTANCE = Executors.newFixedThreadPool(
				Math.max(4, 2 * Runtime.getRuntime().availableProcessors()), new ThreadFactory() {

					private final AtomicInteger count = new AtomicInteger();

					@Override
					public Thread newThread(Runnable task) {
						Thread thread = new Thread(task, "journal-entity-" + this.count.incrementAndGet());
						thread.setDaemon(true);
						return thread;
					}

				});

	}

}
