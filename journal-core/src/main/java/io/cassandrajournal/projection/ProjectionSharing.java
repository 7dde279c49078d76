package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.Objects;
import java.util.UUID;

import com.datastax.oss.driver.api.core.CqlSession;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * Lets several instances (processes, machines) share an engine's projections: each segment of a projection
 * ({@link ProjectionSettings#withSegments}) is owned by one instance at a time through a lease row in Cassandra,
 * and every cursor write is fenced by the lease's epoch, so an instance that lost its lease (a GC pause, a
 * network partition, SIGSTOP) cannot move the cursor. Instances find each other through membership rows and
 * spread the segments among themselves by rendezvous hashing; no coordinator or other service is needed.
 * Immutable; pass it to {@link ProjectionEngine.Builder#sharing}, which needs a {@link DurableStateOffsetStore}.
 * <pre>{@code
 * ProjectionEngine engine = ProjectionEngine.builder(journal)
 *     .readJournal(readJournal)
 *     .offsetStore(new DurableStateOffsetStore(durableStateStore))
 *     .sharing(ProjectionSharing.create(session, options))
 *     .build();
 * }</pre>
 * Tables of ours: {@code <durableStateTable>_leases} and {@code <durableStateTable>_members} (created or checked
 * when the engine is built). Handlers of shared projections must be idempotent: a segment that changes owner
 * after a crash re-delivers at most the batch its previous owner had not saved, and an owner that was paused
 * past its lease may finish the batch in hand (its cursor save is refused).
 */
public final class ProjectionSharing {

	/**
	 * How long an owner's heartbeat may stay unchanged before another instance takes its segments (default 10 s):
	 * a dead instance's segments stand still this long, while a shorter one risks takeovers during a long GC or a
	 * slow Cassandra.
	 */
	public static final Duration DEFAULT_LEASE_TIMEOUT = Duration.ofSeconds(10);

	/**
	 * How often an owner renews its leases and heartbeat (default 2 s): five renewals per lease timeout, so a
	 * few slow ones do not cost the lease. It is also the owner's safety margin: it stops using a lease at
	 * {@code leaseTimeout - renewInterval} after the start of its last successful renewal.
	 */
	public static final Duration DEFAULT_RENEW_INTERVAL = Duration.ofSeconds(2);

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final String instanceId;

	private final Duration leaseTimeout;

	private final Duration renewInterval;

	private ProjectionSharing(CqlSession session, CassandraJournalOptions options, String instanceId,
			Duration leaseTimeout, Duration renewInterval) {
		this.session = Objects.requireNonNull(session, "session");
		this.options = Objects.requireNonNull(options, "options");
		this.instanceId = Objects.requireNonNull(instanceId, "instanceId");
		this.leaseTimeout = Objects.requireNonNull(leaseTimeout, "leaseTimeout");
		this.renewInterval = Objects.requireNonNull(renewInterval, "renewInterval");
		if (instanceId.isBlank()) {
			throw new IllegalArgumentException("instanceId must not be blank");
		}
		if (renewInterval.isNegative() || renewInterval.isZero()
				|| renewInterval.multipliedBy(3).compareTo(leaseTimeout) > 0) {
			throw new IllegalArgumentException("renewInterval must be positive and at most a third of leaseTimeout "
					+ "(so an owner renews several times before a contender may take over), was " + renewInterval
					+ " with leaseTimeout " + leaseTimeout);
		}
	}

	/**
	 * @param session the session the lease and membership tables are written through
	 * @param options the keyspace, the durable state table (whose name the tables' names extend), consistency
	 * @return sharing with a random instance id and the default timings
	 */
	public static ProjectionSharing create(CqlSession session, CassandraJournalOptions options) {
		return new ProjectionSharing(session, options, UUID.randomUUID().toString(), DEFAULT_LEASE_TIMEOUT,
				DEFAULT_RENEW_INTERVAL);
	}

	/**
	 * @param id this instance's id, unique among the instances sharing the projections (for example the host
	 * name and port; default a random UUID per engine)
	 * @return new sharing settings
	 */
	public ProjectionSharing withInstanceId(String id) {
		return new ProjectionSharing(this.session, this.options, id, this.leaseTimeout, this.renewInterval);
	}

	/**
	 * @param timeout see {@link #DEFAULT_LEASE_TIMEOUT}
	 * @param renewInterval see {@link #DEFAULT_RENEW_INTERVAL}; at most a third of the timeout
	 * @return new sharing settings
	 */
	public ProjectionSharing withLeaseTiming(Duration timeout, Duration renewInterval) {
		return new ProjectionSharing(this.session, this.options, this.instanceId, timeout, renewInterval);
	}

	/** @return this instance's id */
	public String instanceId() {
		return this.instanceId;
	}

	/** @return the lease timeout */
	public Duration leaseTimeout() {
		return this.leaseTimeout;
	}

	/** @return the renewal interval, also the owner's safety margin */
	public Duration renewInterval() {
		return this.renewInterval;
	}

	CqlSession session() {
		return this.session;
	}

	CassandraJournalOptions options() {
		return this.options;
	}

}
