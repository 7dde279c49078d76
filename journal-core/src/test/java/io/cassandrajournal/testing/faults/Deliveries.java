package io.cassandrajournal.testing.faults;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.projection.ProjectionHandler;

/**
 * What one projection of a fault run delivered, for the checker: per account its read model (sequence number
 * to delta, idempotent under redelivery), the order of its deliveries, and whether two events of one account
 * were ever in the handler at once. Several projections may share one (the projections by persistenceId, one
 * per account).
 */
final class Deliveries {

	/** What the projection promises about the order of one entity's events. */
	enum Promise {

		/**
		 * Nothing checked beyond delivery: a tag feed keeps per-entity order only for events visible within its
		 * consistency window, and late batches are made later than that on purpose.
		 */
		NONE,
		/** A projection by persistenceId: a later event is never delivered before an earlier one. */
		PER_ENTITY_ORDER,
		/** Lanes ({@code withConcurrency}): never two events of one entity in the handler at once. */
		ONE_AT_A_TIME_PER_ENTITY

	}

	private final String name;

	private final Promise promise;

	private final LongPredicate expects;

	private final long handlerNanos;

	private final Map<String, Map<Long, Long>> model = new ConcurrentHashMap<>();

	private final Map<String, List<Long>> order = new ConcurrentHashMap<>();

	private final Map<String, AtomicInteger> inHandler = new ConcurrentHashMap<>();

	private final AtomicLong overlaps = new AtomicLong();

	private volatile @Nullable String firstOverlap;

	/**
	 * @param name the projection's name, for reports
	 * @param promise what it promises about per-entity order
	 * @param expects which stored account events (by delta) it must deliver, and no others
	 * @param handlerNanos how long the handler takes per event (lanes only matter with a slow handler)
	 */
	Deliveries(String name, Promise promise, LongPredicate expects, long handlerNanos) {
		this.name = name;
		this.promise = promise;
		this.expects = expects;
		this.handlerNanos = handlerNanos;
	}

	String name() {
		return this.name;
	}

	Promise promise() {
		return this.promise;
	}

	/**
	 * @return whether it reads the tag index (every projection but those by persistenceId): an event an unknown
	 * append left without its tag row never reaches it (counted under UNKNOWN_TAG_INDEX_SPLIT, finding 5)
	 */
	boolean readsTagIndex() {
		return this.promise != Promise.PER_ENTITY_ORDER;
	}

	boolean expects(long delta) {
		return this.expects.test(delta);
	}

	ProjectionHandler<FaultEvent> handler() {
		return ProjectionHandler.blocking((event) -> deliver(event.persistenceId(), event.sequenceNr(),
				event.payload().delta()));
	}

	/** Records one delivery (the handler; the checker's tests call it directly). */
	void deliver(String persistenceId, long sequenceNr, long delta) {
		enter(persistenceId, sequenceNr);
		try {
			this.model.computeIfAbsent(persistenceId, (pid) -> new ConcurrentHashMap<>()).put(sequenceNr, delta);
			this.order.computeIfAbsent(persistenceId, (pid) -> Collections.synchronizedList(new ArrayList<>()))
				.add(sequenceNr);
			if (this.handlerNanos > 0) {
				// A slow handler (a remote call, say): lanes run several events at once only then.
				LockSupport.parkNanos(this.handlerNanos);
			}
		}
		finally {
			exit(persistenceId);
		}
	}

	/** An event of the entity enters the handler. */
	void enter(String persistenceId, long sequenceNr) {
		AtomicInteger busy = this.inHandler.computeIfAbsent(persistenceId, (pid) -> new AtomicInteger());
		if (busy.incrementAndGet() > 1 && this.overlaps.getAndIncrement() == 0) {
			this.firstOverlap = persistenceId + " at " + sequenceNr;
		}
	}

	/** An event of the entity leaves the handler. */
	void exit(String persistenceId) {
		this.inHandler.get(persistenceId).decrementAndGet();
	}

	/** @return per account, sequence number to delta */
	Map<String, Map<Long, Long>> model() {
		return this.model;
	}

	/**
	 * @param persistenceId an account
	 * @return its sequence numbers in the order they were delivered, redeliveries included
	 */
	List<Long> order(String persistenceId) {
		List<Long> delivered = this.order.get(persistenceId);
		if (delivered == null) {
			return List.of();
		}
		synchronized (delivered) {
			return List.copyOf(delivered);
		}
	}

	long overlaps() {
		return this.overlaps.get();
	}

	@Nullable String firstOverlap() {
		return this.firstOverlap;
	}

	/**
	 * @param name a name
	 * @param model a read model built elsewhere (the application-JVM kill run reads it from a table)
	 * @return deliveries holding that model, with no order promised
	 */
	static Deliveries of(String name, Map<String, Map<Long, Long>> model) {
		Deliveries deliveries = new Deliveries(name, Promise.NONE, (delta) -> true, 0);
		model.forEach((pid, events) -> deliveries.model.put(pid, new ConcurrentHashMap<>(events)));
		return deliveries;
	}

}
