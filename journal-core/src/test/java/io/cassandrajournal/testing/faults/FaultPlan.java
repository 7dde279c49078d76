package io.cassandrajournal.testing.faults;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import org.jspecify.annotations.Nullable;

/**
 * A seeded fault schedule: the n-th statement the plan is asked about gets the n-th decision of a sequence
 * that depends only on the seed. Decisions are deterministic given the seed; which statement is the n-th is
 * not, because concurrent clients interleave differently from run to run. A run is therefore reproducible in
 * its fault mix and rates, not statement for statement.
 * <p>
 * Each decision draws one number in [0, 1) and compares it with the rates of the statement's class, in the
 * order of {@link Kind}; a second draw picks the delay of a slow response or a late batch.
 */
public final class FaultPlan {

	/** What happens to one statement. */
	public enum Kind {

		/** Fails with {@code NoNodeAvailableException} without reaching Cassandra: certainly not applied. */
		FAIL_BEFORE_SENDING,
		/** A plain write is applied, then reported as a {@code WriteTimeoutException} (write type SIMPLE). */
		APPLY_THEN_TIMEOUT_WRITE,
		/** A batch is applied, then reported as a {@code WriteTimeoutException} (UNLOGGED_BATCH / BATCH). */
		APPLY_THEN_TIMEOUT_BATCH,
		/** A lightweight transaction on the metadata row (claim, release) is applied, then times out (CAS). */
		APPLY_THEN_TIMEOUT_CLAIM,
		/** Another lightweight transaction (a compare-and-set save) is applied, then times out (CAS). */
		APPLY_THEN_TIMEOUT_CAS_SAVE,
		/** A read fails with {@code DriverTimeoutException}; the next try is decided afresh. */
		READ_FAILS,
		/** The statement runs; its response arrives late. */
		SLOW_RESPONSE,
		/** A batch is held back before it is sent: its events are claimed and stamped, then written late. */
		LATE_BATCH,
		/**
		 * A lightweight transaction on the metadata row (claim, release) fails at once with
		 * {@code ClosedConnectionException} ("Unexpected error on channel"), and reaches Cassandra only later (up to
		 * {@link Rates#lostApplyWithin}): a coordinator still running the round after its connection failed
		 * (finding 20).
		 */
		CONNECTION_LOST_CLAIM

	}

	/** How the plan classifies a statement (see {@link PlannedFaultSession#classify}). */
	public enum StatementClass {

		READ, WRITE, BATCH, CLAIM, CAS_SAVE

	}

	/**
	 * Probabilities per decision.
	 *
	 * @param failBeforeSending any statement
	 * @param applyThenTimeOut a write of any kind (plain, batch, claim, compare-and-set save)
	 * @param readFails a read
	 * @param slowResponse any statement
	 * @param lateBatch a batch
	 * @param connectionLost a claim or release (metadata lightweight transaction)
	 * @param slow the longest delay of a slow response
	 * @param late the longest delay of a late batch
	 * @param lostApplyWithin the longest a statement whose connection was lost takes to reach Cassandra: within
	 * the {@code claim-settle-time} {@link FaultRun} sets (2 s), as a real coordinator's round ends within its timeouts
	 */
	public record Rates(double failBeforeSending, double applyThenTimeOut, double readFails, double slowResponse,
			double lateBatch, double connectionLost, Duration slow, Duration late, Duration lostApplyWithin) {

		/** @return the rates of the short and the long run */
		public static Rates defaults() {
			return new Rates(0.02, 0.02, 0.02, 0.03, 0.01, 0.005, Duration.ofMillis(200), Duration.ofSeconds(2),
					Duration.ofSeconds(1));
		}

	}

	/** One decision: a fault and the delay it uses (slow response, late batch). */
	public record Decision(Kind kind, long delayMillis) {
	}

	private final long seed;

	private final Rates rates;

	private final AtomicLong decisions = new AtomicLong();

	private final AtomicLongArray injected = new AtomicLongArray(Kind.values().length);

	private volatile boolean armed;

	public FaultPlan(long seed, Rates rates) {
		this.seed = seed;
		this.rates = rates;
	}

	public long seed() {
		return this.seed;
	}

	/** Starts injecting: statements before this (schema set-up) go through untouched. */
	public void arm() {
		this.armed = true;
	}

	/** Stops injecting (the checker reads the tables without faults). */
	public void disarm() {
		this.armed = false;
	}

	/**
	 * @param statementClass what the statement is
	 * @return the fault to inject, or {@code null}; counted by kind when not null
	 */
	public @Nullable Decision decide(StatementClass statementClass) {
		if (!this.armed) {
			return null;
		}
		long n = this.decisions.getAndIncrement();
		Decision decision = decision(statementClass, n);
		if (decision != null) {
			this.injected.incrementAndGet(decision.kind().ordinal());
		}
		return decision;
	}

	/**
	 * The n-th decision for a statement of this class: a pure function of the seed.
	 * @param statementClass what the statement is
	 * @param n its position in the sequence of decisions
	 * @return the fault, or {@code null}
	 */
	@Nullable Decision decision(StatementClass statementClass, long n) {
		double u = unit(mix(this.seed + 0x9E3779B97F4A7C15L * (2 * n + 1)));
		double v = unit(mix(this.seed + 0x9E3779B97F4A7C15L * (2 * n + 2)));
		Rates r = this.rates;
		boolean write = statementClass != StatementClass.READ;
		double edge = r.failBeforeSending();
		if (u < edge) {
			return new Decision(Kind.FAIL_BEFORE_SENDING, 0);
		}
		if (write && u < (edge += r.applyThenTimeOut())) {
			return new Decision(switch (statementClass) {
				case BATCH -> Kind.APPLY_THEN_TIMEOUT_BATCH;
				case CLAIM -> Kind.APPLY_THEN_TIMEOUT_CLAIM;
				case CAS_SAVE -> Kind.APPLY_THEN_TIMEOUT_CAS_SAVE;
				default -> Kind.APPLY_THEN_TIMEOUT_WRITE;
			}, 0);
		}
		if (statementClass == StatementClass.CLAIM && u < (edge += r.connectionLost())) {
			return new Decision(Kind.CONNECTION_LOST_CLAIM, 1 + (long) (v * r.lostApplyWithin().toMillis()));
		}
		if (!write && u < (edge += r.readFails())) {
			return new Decision(Kind.READ_FAILS, 0);
		}
		if (statementClass == StatementClass.BATCH && u < (edge += r.lateBatch())) {
			return new Decision(Kind.LATE_BATCH, 1 + (long) (v * r.late().toMillis()));
		}
		if (u < edge + r.slowResponse()) {
			return new Decision(Kind.SLOW_RESPONSE, 1 + (long) (v * r.slow().toMillis()));
		}
		return null;
	}

	/** @return how many statements the plan decided about while armed */
	public long decisions() {
		return this.decisions.get();
	}

	/** @return faults injected so far, by kind (every kind, zeros included) */
	public Map<Kind, Long> injected() {
		Map<Kind, Long> counts = new EnumMap<>(Kind.class);
		for (Kind kind : Kind.values()) {
			counts.put(kind, this.injected.get(kind.ordinal()));
		}
		return counts;
	}

	/** SplitMix64's finaliser. */
	private static long mix(long z) {
		z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
		z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
		return z ^ (z >>> 31);
	}

	private static double unit(long bits) {
		return (bits >>> 11) * 0x1.0p-53;
	}

}
