package io.cassandrajournal.entity;

import java.util.Objects;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.snapshot.SnapshotStore;

/**
 * Creates {@link EntityRepository entity repositories} over one journal and snapshot store with shared
 * defaults (the Spring Boot starter provides one as a bean, configured by
 * {@code journal.cassandra.entities.*}).
 *
 * <pre>{@code
 * @Service
 * class Accounts {
 *     private final EntityRepository<Balance, AccountEvent> repository;
 *
 *     Accounts(EntityRepositories repositories) {
 *         this.repository = repositories.create(new AccountEntity());
 *     }
 * }
 * }</pre>
 */
public final class EntityRepositories {

	/** Retries of a command after a concurrency conflict unless configured otherwise: {@value}. */
	public static final int DEFAULT_MAX_RETRIES = 3;

	/** Entity states kept in memory per repository unless configured otherwise: {@value}. */
	public static final int DEFAULT_CACHE_SIZE = 1000;

	private final Journal journal;

	private final @Nullable SnapshotStore snapshots;

	private final int maxRetries;

	private final int cacheSize;

	/**
	 * @param journal the journal
	 * @param snapshots the snapshot store, or {@code null} (entities that take snapshots then cannot be used)
	 * @param maxRetries default retries of a command after a concurrency conflict
	 * @param cacheSize default number of entity states kept in memory per repository (0: none)
	 */
	public EntityRepositories(Journal journal, @Nullable SnapshotStore snapshots, int maxRetries, int cacheSize) {
		this.journal = Objects.requireNonNull(journal, "journal");
		this.snapshots = snapshots;
		if (maxRetries < 0) {
			throw new IllegalArgumentException("maxRetries must be 0 or more, was " + maxRetries);
		}
		if (cacheSize < 0) {
			throw new IllegalArgumentException("cacheSize must be 0 or more, was " + cacheSize);
		}
		this.maxRetries = maxRetries;
		this.cacheSize = cacheSize;
	}

	/**
	 * @param <S> the state type
	 * @param <E> the event type
	 * @param entity the entity definition
	 * @return a repository with the default retries and cache
	 */
	public <S, E> EntityRepository<S, E> create(EventSourcedEntity<S, E> entity) {
		return EntityRepository.create(this.journal, this.snapshots, entity, this.maxRetries).withCache(this.cacheSize);
	}

	/** @return the default retries after a concurrency conflict */
	public int maxRetries() {
		return this.maxRetries;
	}

	/** @return the default cache size */
	public int cacheSize() {
		return this.cacheSize;
	}

}
