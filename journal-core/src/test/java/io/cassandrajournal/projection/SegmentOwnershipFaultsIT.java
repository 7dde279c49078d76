package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.JournalLogs;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.FaultInjectingSession.cqlContains;
import static io.cassandrajournal.testing.FaultInjectingSession.writesTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * One instance sharing a projection of 4 segments on a real node while its lease requests misbehave: a renewal
 * that hangs, lease rows that cannot be read, a reset whose cursor write fails, a graceful stop whose batch in
 * hand outlasts the term; and (one segment, the lease machinery alone) a take whose runner cannot be started. Each
 * must leave the other segments running, no segment held without a running owner, and a batch in hand under a
 * valid term.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SegmentOwnershipFaultsIT {

	private static final Duration LEASE_TIMEOUT = Duration.ofSeconds(3);

	private static final Duration RENEW_INTERVAL = Duration.ofMillis(500);

	private static final int SEGMENTS = 4;

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	private FaultInjectingSession faults;

	private CassandraJournal journal;

	private CassandraReadJournal query;

	private MemberTable members;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		this.faults = new FaultInjectingSession(keyspace.session());
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		this.journal = CassandraJournal.create(keyspace.session(), this.options, serializer);
		this.query = CassandraReadJournal.create(this.journal, keyspace.session(), this.options, serializer);
		this.members = MemberTable.create(keyspace.session(), this.options);
	}

	@AfterEach
	void heal() {
		this.faults.heal();
	}

	/** An engine whose lease, membership and cursor requests all go through the fault-injecting session. */
	private ProjectionEngine engine(String instance) {
		return ProjectionEngine.builder(this.journal)
			.readJournal(this.query)
			.offsetStore(new DurableStateOffsetStore(CassandraDurableStateStore.create(this.faults.session(),
					this.options, new JacksonEventSerializer())))
			.sharing(ProjectionSharing.create(this.faults.session(), this.options)
				.withInstanceId(instance)
				.withLeaseTiming(LEASE_TIMEOUT, RENEW_INTERVAL))
			.build();
	}

	private SegmentedProjection<?> register(ProjectionEngine engine, String name) {
		return (SegmentedProjection<?>) engine.register(Projection.byTag(name, TagFilter.tag(name),
				AccountEvent.class, EventHandler.blocking((event) -> {
				}), ProjectionSettings.defaults().withSegments(SEGMENTS).withPollInterval(Duration.ofMillis(100))));
	}

	private static boolean allRunning(SegmentedProjection<?> projection) {
		return projection.segments().stream().allMatch((s) -> s.term != null && s.runner != null
				&& s.runner.status().state() == ProjectionState.RUNNING);
	}

	private static boolean allValid(SegmentedProjection<?> projection) {
		return allRunning(projection) && projection.segments().stream().allMatch((s) -> {
			LeaseTerm term = s.term;
			return term != null && term.valid();
		});
	}

	/** @return the renewals of one segment's lease */
	private static Predicate<Statement<?>> renewalOf(String segment) {
		return cqlContains("SET beat = ?")
			.and((s) -> s instanceof BoundStatement bound && segment.equals(bound.getString("segment")));
	}

	@Test
	void aRenewalThatHangsDoesNotLetTheOtherSegmentsLeasesLapse() {
		String name = "stuck-" + System.nanoTime();
		try (ProjectionEngine engine = engine("a")) {
			SegmentedProjection<?> projection = register(engine, name);
			result(engine.startAll());
			// Bound: the instance counts itself live and takes every free segment on its first rounds.
			await("every segment runs").atMost(Duration.ofSeconds(20)).until(() -> allRunning(projection));
			List<SegmentedProjection.Segment> others = projection.segments().subList(1, SEGMENTS);
			Map<SegmentedProjection.Segment, LeaseTerm> terms = others.stream()
				.collect(Collectors.toMap((s) -> s, (s) -> s.term));

			this.faults.delayMatching(renewalOf(projection.segments().get(0).range.key()), LEASE_TIMEOUT.multipliedBy(2));

			// Bound: for two lease timeouts (each term is valid 2.5 s past its last renewal's start) the other
			// segments keep the term they had and it stays valid: they were renewed on time.
			await("the other segments keep their terms").during(LEASE_TIMEOUT.multipliedBy(2))
				.atMost(LEASE_TIMEOUT.multipliedBy(3))
				.until(() -> others.stream().allMatch((s) -> s.term == terms.get(s) && terms.get(s).valid()));
		}
	}

	/**
	 * A renewal whose send throws an {@code Error} on the renewal thread (here an {@code AssertionError} from the
	 * session): before, it escaped the renewal loop, which {@code scheduleWithFixedDelay} then ran no more, and left
	 * the term marked as renewing; the segments stayed held by an instance that still beat, their terms lapsed, and
	 * they never ran again. Now that renewal fails like any other: its segment is dropped and taken again, and the
	 * others keep being renewed.
	 */
	@Test
	void anErrorThrownByARenewalDoesNotEndTheRenewals() {
		String name = "error-" + System.nanoTime();
		try (ProjectionEngine engine = engine("a")) {
			SegmentedProjection<?> projection = register(engine, name);
			result(engine.startAll());
			await("every segment runs").atMost(Duration.ofSeconds(20)).until(() -> allRunning(projection));
			Set<LeaseTerm> before = projection.segments().stream().map((s) -> s.term).collect(Collectors.toSet());

			this.faults.throwOnSend(cqlContains("SET beat = ?"), 1, () -> new AssertionError("injected on the send"));
			await("the error was thrown").atMost(LEASE_TIMEOUT).until(() -> this.faults.injected() > 0);

			// Bounds: the segment whose renewal threw is dropped and taken again once its row expires (one lease
			// timeout); then, for two lease timeouts, every segment runs under a valid term. Without renewals every
			// term lapses 2.5 s after its last renewal.
			await("the segment whose renewal threw is taken again").atMost(LEASE_TIMEOUT.multipliedBy(3))
				.until(() -> allValid(projection)
						&& projection.segments().stream().anyMatch((s) -> !before.contains(s.term)));
			await("every segment keeps running under a valid term").during(LEASE_TIMEOUT.multipliedBy(2))
				.atMost(LEASE_TIMEOUT.multipliedBy(3))
				.until(() -> allValid(projection));
			assertThat(projection.segments().stream().filter((s) -> before.contains(s.term)).count())
				.as("the segments whose renewal did not throw kept their terms").isGreaterThanOrEqualTo(SEGMENTS - 1);
		}
	}

	@Test
	void anInstanceThatCannotReadTheLeaseRowsDoesNotBeat() {
		String name = "blind-" + System.nanoTime();
		this.faults.failMatching(cqlContains("segment IN"));
		try (ProjectionEngine engine = engine("a")) {
			SegmentedProjection<?> projection = register(engine, name);
			result(engine.startAll());
			// Bound: a round runs at once and then every renewal interval; none of the first eight may beat.
			await("no heartbeat while the lease rows cannot be read").during(RENEW_INTERVAL.multipliedBy(4))
				.atMost(RENEW_INTERVAL.multipliedBy(6))
				.until(() -> !result(this.members.list(name)).containsKey("a"));

			this.faults.heal();
			await("every segment runs once the rows can be read").atMost(Duration.ofSeconds(20))
				.until(() -> allRunning(projection));
		}
	}

	@Test
	void aResetWhoseCursorWriteFailsReleasesItsSegmentsSoTheyRunAgain() {
		String name = "reset-" + System.nanoTime();
		try (ProjectionEngine engine = engine("a")) {
			SegmentedProjection<?> projection = register(engine, name);
			result(engine.startAll());
			await("every segment runs").atMost(Duration.ofSeconds(20)).until(() -> allRunning(projection));

			this.faults.failMatching(writesTo(this.options.durableStateTable()));
			assertThatThrownBy(() -> result(projection.reset(TagOffset.START))).isNotNull();
			this.faults.heal();

			// Bound: the segments are released at once and taken again on the next round (the row is released),
			// their cursors fenced and runners started: well within two lease timeouts.
			await("every segment runs again").atMost(LEASE_TIMEOUT.multipliedBy(2)).until(() -> allRunning(projection));
			assertThat(projection.status().state()).isEqualTo(ProjectionState.RUNNING);
		}
	}

	/**
	 * A reset asked for while another runs is refused by every segment's runner ("being reset already"); that
	 * refusal is not a failure of the segment, which keeps its lease (before: each segment was released for it, as
	 * for a failed cursor write, ending its term under the first reset; docs/reliability.md, finding 29).
	 */
	@Test
	void aSecondResetWhileOneRunsIsRefusedWithoutReleasingTheSegments() {
		String name = "reset-twice-" + System.nanoTime();
		try (ProjectionEngine engine = engine("a")) {
			SegmentedProjection<?> projection = register(engine, name);
			result(engine.startAll());
			await("every segment runs").atMost(Duration.ofSeconds(20)).until(() -> allRunning(projection));
			List<LeaseTerm> terms = projection.segments().stream().map((s) -> s.term).toList();

			// The first reset's cursor writes take a second, so that the second reset meets it in every segment.
			this.faults.delayMatching(writesTo(this.options.durableStateTable()), Duration.ofSeconds(1));
			CompletionStage<Void> first = projection.reset(TagOffset.START);
			assertThatThrownBy(() -> result(projection.reset(TagOffset.START)))
				.hasMessageContaining("being reset already");
			result(first, Duration.ofSeconds(20));
			this.faults.heal();

			// Bound: a release for the refusal runs on the lease thread at once; four renewals leave it room.
			await("every segment keeps the term it had before the resets").during(RENEW_INTERVAL.multipliedBy(4))
				.atMost(RENEW_INTERVAL.multipliedBy(8))
				.until(() -> sameTerms(projection, terms) && allRunning(projection));
		}
	}

	private static boolean sameTerms(SegmentedProjection<?> projection, List<LeaseTerm> terms) {
		List<SegmentedProjection.Segment> segments = projection.segments();
		for (int i = 0; i < segments.size(); i++) {
			if (segments.get(i).term != terms.get(i)) {
				return false;
			}
		}
		return true;
	}

	@Test
	void aStoppingInstanceKeepsRenewingWhileItsBatchInHandFinishes() {
		String name = "stopping-" + System.nanoTime();
		CountDownLatch holding = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		try (ProjectionEngine engine = engine("a")) {
			try {
				stopWhileABatchIsInHand(engine, name, holding, release);
			}
			finally {
				release.countDown();
			}
		}
	}

	/**
	 * A take whose runner cannot be started (the starter throws, here an Error; a RuntimeException did the same)
	 * must not leave the segment held: before, the term was set before the starter ran, so the lease loop (which
	 * only takes segments without a term) never took it again while the renewals kept it held, and an Error ended
	 * the lease loop itself. Runs a {@link SegmentOwnership} of one segment on its own, with a starter that throws
	 * on its first take.
	 */
	@Test
	void aTakeWhoseRunnerCannotStartReleasesTheSegmentSoItIsTakenAgain() {
		String name = "take-" + System.nanoTime();
		AtomicInteger takes = new AtomicInteger();
		try (Standalone alone = new Standalone(name, this.keyspace.session(), (taken, mayGoOn, cursor) -> {
			if (takes.incrementAndGet() == 1) {
				throw new ExceptionInInitializerError("the first take's runner cannot be made");
			}
			return idle(taken);
		}, null)) {
			// Bound: released at once, taken again on a later round (every 500 ms), well within two lease timeouts.
			await("the segment taken again and running").atMost(LEASE_TIMEOUT.multipliedBy(2))
				.until(() -> takes.get() >= 2 && alone.segment.term != null && alone.segment.runner != null);
		}
	}

	/**
	 * A runner that cannot start at all (finding 32, item 4): before, its segment was taken and released at every
	 * round (every renewal interval: an acquire and a release, each a Paxos round, and a WARN with a stack trace
	 * each time, without end). Now a failed start waits before the segment is taken again, the wait doubling from
	 * the renewal interval up to the lease timeout, and only the first failure of a streak is logged as a WARN; a
	 * start that succeeds ends the streak (logged once, INFO). The take times are read in the starter.
	 */
	@Test
	void aRunnerThatCannotStartIsTakenAgainAfterADoublingBackOffWithOneWarning() {
		String name = "churn-" + System.nanoTime();
		List<Long> takes = new CopyOnWriteArrayList<>();
		AtomicBoolean broken = new AtomicBoolean(true);
		try (JournalLogs logs = JournalLogs.capture();
				Standalone alone = new Standalone(name, this.keyspace.session(), (taken, mayGoOn, cursor) -> {
					takes.add(System.nanoTime());
					if (broken.get()) {
						throw new IllegalStateException("the runner of " + name + " cannot be made");
					}
					return idle(taken);
				}, null)) {
			// Bound: with the back-off the sixth take comes about 9.5 s after the first (waits of 0.5, 1, 2, 3 and 3 s);
			// without it, about 2.5 s after.
			await("six takes").atMost(Duration.ofSeconds(30)).until(() -> takes.size() >= 6);
			List<Duration> gaps = new ArrayList<>();
			for (int i = 1; i < 6; i++) {
				gaps.add(Duration.ofNanos(takes.get(i) - takes.get(i - 1)));
			}
			assertThat(gaps.get(0)).as("first retry, at the next round").isGreaterThanOrEqualTo(RENEW_INTERVAL);
			assertThat(gaps.get(1)).as("second wait, doubled").isGreaterThanOrEqualTo(RENEW_INTERVAL.multipliedBy(2));
			assertThat(gaps.get(2)).as("third wait, doubled").isGreaterThanOrEqualTo(RENEW_INTERVAL.multipliedBy(4));
			// Capped at the lease timeout: the next round after it (rounds are a renewal interval apart), with a slack
			// for a slow round on a loaded machine.
			assertThat(gaps.get(3)).as("capped").isBetween(LEASE_TIMEOUT, LEASE_TIMEOUT.plusSeconds(2));
			assertThat(gaps.get(4)).as("capped").isBetween(LEASE_TIMEOUT, LEASE_TIMEOUT.plusSeconds(2));
			assertThat(logs.about("could not start its runner", Level.WARN)).as("one WARN for the streak").hasSize(1);

			broken.set(false);
			// Bound: the next take comes at most a lease timeout (the capped wait) and a round later.
			await("the segment runs once its runner can start").atMost(LEASE_TIMEOUT.multipliedBy(2))
				.until(() -> alone.segment.term != null && alone.segment.runner != null);
			assertThat(logs.about("failed takes", Level.INFO)).as("the end of the streak").hasSize(1);
		}
	}

	/**
	 * A take whose cursor fence throws an Error as it is sent (finding 32, item 5): the take caught only runtime
	 * exceptions, so the Error left the lease row held by this instance with no term here, neither renewed nor run,
	 * until the row's silence reached the lease timeout and this instance took its own row over. Now the lease is
	 * released at once and taken again at the next round.
	 */
	@Test
	void aTakeWhoseFenceThrowsAnErrorReleasesTheSegmentAtOnce() {
		String name = "fence-error-" + System.nanoTime();
		AtomicInteger takes = new AtomicInteger();
		this.faults.throwOnSend(cursorReads(), 1, () -> new AssertionError("injected on the fence's read"));
		try (JournalLogs logs = JournalLogs.capture();
				Standalone alone = new Standalone(name, this.faults.session(), (taken, mayGoOn, cursor) -> {
					takes.incrementAndGet();
					return idle(taken);
				}, (segment, offsets) -> CompletableFuture.completedFuture(TagOffset.START))) {
			await("the error was thrown").atMost(LEASE_TIMEOUT).until(() -> this.faults.injected() > 0);
			// Bound: released at once, taken again at the next round (500 ms later) and fenced; an unreleased row is
			// taken over only after a lease timeout of silence (3 s) counted from the next round.
			await("taken again and running").atMost(LEASE_TIMEOUT)
				.until(() -> takes.get() == 1 && alone.segment.term != null && alone.segment.runner != null);
			assertThat(logs.about("could not fence its cursor", Level.WARN)).isNotEmpty();
		}
	}

	/**
	 * A take whose cursor fence answers after the term's validity (finding 32, item 5): the take waited for it
	 * without a bound, then started the runner under a term that had lapsed meanwhile (it read nothing, and the
	 * next renewal dropped it). Now the wait is bounded by the term's validity: the lease is released and the
	 * segment taken again under a new term; no runner is ever started under a lapsed term.
	 */
	@Test
	void aTakeWhoseFenceOutlastsTheTermStartsNoRunnerUnderALapsedTerm() {
		String name = "fence-slow-" + System.nanoTime();
		List<Boolean> validAtStart = new CopyOnWriteArrayList<>();
		this.faults.delayAnswerOnce(cursorReads(), 0, LEASE_TIMEOUT.plusSeconds(1));
		try (Standalone alone = new Standalone(name, this.faults.session(), (taken, mayGoOn, cursor) -> {
			validAtStart.add(mayGoOn.getAsBoolean());
			return idle(taken);
		}, (segment, offsets) -> CompletableFuture.completedFuture(TagOffset.START))) {
			// Bound: the slow fence (4 s), or its bound (2.5 s) and a new take; then the segment runs.
			await("a runner started").atMost(LEASE_TIMEOUT.multipliedBy(4))
				.until(() -> !validAtStart.isEmpty() && alone.segment.runner != null);
			assertThat(validAtStart).as("each runner started under a valid term").containsOnly(true);
		}
	}

	/**
	 * A take whose fence fails and whose release then fails too: the release's answer was not looked at, so nothing
	 * said why the segment stayed held by this instance, unrun, until its row lapsed. Now that failure is a WARN; the
	 * row lapses after the lease timeout and the segment is taken again.
	 */
	@Test
	void aReleaseThatFailsAfterAFailedFenceIsLogged() {
		String name = "release-fails-" + System.nanoTime();
		AtomicInteger takes = new AtomicInteger();
		this.faults.throwOnSend(cursorReads(), 1, () -> new AssertionError("injected on the fence's read"));
		// The release, and the serial read of the row that settles a release of unknown outcome.
		this.faults.failBeforeSending(leaseReleases(), 1);
		this.faults.failBeforeSending(cqlContains("SELECT owner, epoch, beat FROM"), 1);
		try (JournalLogs logs = JournalLogs.capture();
				Standalone alone = new Standalone(name, this.faults.session(), (taken, mayGoOn, cursor) -> {
					takes.incrementAndGet();
					return idle(taken);
				}, (segment, offsets) -> CompletableFuture.completedFuture(TagOffset.START))) {
			// Bound: the release is sent, and fails, as soon as the fence failed on the first round.
			await("the failed release logged").atMost(LEASE_TIMEOUT)
				.until(() -> !logs.about("after a failed take failed", Level.WARN).isEmpty());
			// Bound: the row this instance still holds is taken over once its silence reached the lease timeout.
			await("taken again once the row lapsed").atMost(LEASE_TIMEOUT.multipliedBy(3))
				.until(() -> takes.get() == 1 && alone.segment.term != null && alone.segment.runner != null);
		}
	}

	/**
	 * A back-off streak ends when the segment goes to another instance: before, it stayed, so when the segment came
	 * back its first failure was logged at DEBUG only (and waited as the old streak's next failure would). Here the
	 * runner never starts; after its first failure another member ({@code other}, which wins this segment by
	 * rendezvous) beats until this instance leaves the segment to it, then leaves: the next failure here is a WARN
	 * again.
	 */
	@Test
	void aStreakEndsWhenItsSegmentGoesToAnotherInstance() {
		String name = "streak-" + System.nanoTime();
		AtomicInteger takes = new AtomicInteger();
		ScheduledExecutorService beats = Executors.newSingleThreadScheduledExecutor();
		try (JournalLogs logs = JournalLogs.capture();
				Standalone alone = new Standalone(name, this.keyspace.session(), (taken, mayGoOn, cursor) -> {
					takes.incrementAndGet();
					throw new IllegalStateException("the runner of " + name + " cannot be made");
				}, null)) {
			// Bound: the first round takes the free segment.
			await("the streak's first failure, a WARN").atMost(LEASE_TIMEOUT)
				.until(() -> logs.about("could not start its runner", Level.WARN).size() == 1);
			String other = winnerOver("a", name, alone.segment.range.key());
			beats.scheduleWithFixedDelay(() -> this.members.beat(name, other, LEASE_TIMEOUT.multipliedBy(3)), 0,
					RENEW_INTERVAL.toMillis() / 2, TimeUnit.MILLISECONDS);
			// Bounds: the other member is live here once its beat was seen to change (two rounds, 500 ms apart); from
			// then on this instance takes the segment no more. Without it, the streak's waits (0.5 to 3 s) would let a
			// take through within a lease timeout and a round.
			AtomicInteger seen = new AtomicInteger(-1);
			await("the segment left to the other member").during(LEASE_TIMEOUT.plus(RENEW_INTERVAL))
				.atMost(LEASE_TIMEOUT.multipliedBy(4))
				.until(() -> seen.getAndSet(takes.get()) == takes.get());
			beats.shutdownNow();
			result(this.members.leave(name, other));

			// Bound: the member row gone, the next round takes the segment again (its last failure is older than the
			// longest wait), and fails.
			await("the first failure after the segment came back, a WARN again").atMost(LEASE_TIMEOUT.multipliedBy(2))
				.until(() -> logs.about("could not start its runner", Level.WARN).size() == 2);
		}
		finally {
			beats.shutdownNow();
		}
	}

	/** @return an instance id that wins {@code segment} of {@code projection} over {@code self} by rendezvous */
	private static String winnerOver(String self, String projection, String segment) {
		for (int i = 0;; i++) {
			String candidate = "other-" + i;
			if (candidate.equals(Rendezvous.winner(projection, segment, List.of(self, candidate)))) {
				return candidate;
			}
		}
	}

	/**
	 * A fence sent late in its term (the take's answer was slow) is bounded by what is left of the term: before, it
	 * was given a whole term from its own send, so a slow fence held the lease thread (every segment's take and
	 * hand-over) and the taken row, unrun, for up to a term past the term's end. Here the take's answer comes 2.2 s
	 * into a term valid 2.5 s, and the fence's read answers 3 s after its send: the take gives up on it when the term
	 * ends, not 2.5 s after the fence's send.
	 */
	@Test
	void aFenceSentLateInTheTermIsBoundByWhatIsLeftOfIt() {
		String name = "fence-late-" + System.nanoTime();
		Duration validFor = LEASE_TIMEOUT.minus(RENEW_INTERVAL);
		AtomicLong takeSent = new AtomicLong();
		Predicate<Statement<?>> acquires = cqlContains("VALUES (?, ?, ?, 1, ?) IF NOT EXISTS").and((s) -> {
			takeSent.compareAndSet(0, System.currentTimeMillis());
			return true;
		});
		this.faults.delayAnswerOnce(acquires, 0, Duration.ofMillis(2200));
		this.faults.delayAnswerOnce(cursorReads(), 0, LEASE_TIMEOUT);
		try (JournalLogs logs = JournalLogs.capture();
				Standalone alone = new Standalone(name, this.faults.session(), (taken, mayGoOn, cursor) -> idle(taken),
						(segment, offsets) -> CompletableFuture.completedFuture(TagOffset.START))) {
			// Bound: given up within the term (2.5 s), or 2.5 s after the fence's send (4.7 s) before.
			await("the take gave up on its fence").atMost(LEASE_TIMEOUT.multipliedBy(3))
				.until(() -> !logs.about("could not fence its cursor", Level.WARN).isEmpty());
			ILoggingEvent gaveUp = logs.about("could not fence its cursor", Level.WARN).get(0);
			assertThat(Duration.ofMillis(gaveUp.getTimeStamp() - takeSent.get()))
				.as("from the take's send to giving up on its fence (the term is valid %s ms)", validFor.toMillis())
				.isLessThan(validFor.plusSeconds(1));
			// Its error says the real bound: what was left of the term when the fence was sent, not the whole term.
			assertThat(gaveUp.getThrowableProxy().getMessage()).as("why the fence did not count")
				.contains("longer than what was left of the term");
		}
	}

	/** @return the releases of a lease */
	private static Predicate<Statement<?>> leaseReleases() {
		return cqlContains("SET owner = null");
	}

	/** @return the reads of a cursor (a durable state row), the first statement of a fence */
	private static Predicate<Statement<?>> cursorReads() {
		return cqlContains("SELECT revision, payload, updated_at FROM");
	}

	private static SegmentRunner idle(SegmentedProjection.Segment taken) {
		SegmentRunner runner = new IdleSegmentRunner(taken.id);
		taken.runner = runner;
		return runner;
	}

	/**
	 * A {@link SegmentOwnership} of one segment on its own (the lease machinery without a projection), started at
	 * once, instance "a", its lease, member and cursor requests sent through {@code session}; closing stops it.
	 */
	private final class Standalone implements AutoCloseable {

		private final ScheduledExecutorService thread = Executors.newSingleThreadScheduledExecutor();

		private final ScheduledExecutorService renewals = Executors.newSingleThreadScheduledExecutor();

		private final SegmentOwnership ownership;

		final SegmentedProjection.Segment segment;

		Standalone(String name, CqlSession session, SegmentOwnership.Starter starter,
				@Nullable BiFunction<SegmentedProjection.Segment, DurableStateOffsetStore, CompletionStage<TagOffset>> initial) {
			CassandraJournalOptions options = SegmentOwnershipFaultsIT.this.options;
			SegmentOwnership.Context context = new SegmentOwnership.Context(
					ProjectionSharing.create(session, options).withInstanceId("a").withLeaseTiming(LEASE_TIMEOUT,
							RENEW_INTERVAL),
					LeaseTable.create(session, options), MemberTable.create(session, options),
					new DurableStateOffsetStore(CassandraDurableStateStore.create(session, options,
							new JacksonEventSerializer())),
					this.thread, this.renewals, System::nanoTime, new AtomicBoolean());
			List<SegmentedProjection.Segment> segments = AbstractSegmentedControl.split(1,
					new ProjectionId(name, name)::segment);
			this.segment = segments.get(0);
			this.ownership = new SegmentOwnership(name, segments, context, starter, initial, (rows, now) -> {
			});
			result(this.ownership.start());
		}

		@Override
		public void close() {
			try {
				result(this.ownership.stop());
			}
			finally {
				this.thread.shutdownNow();
				this.renewals.shutdownNow();
			}
		}

	}

	private void stopWhileABatchIsInHand(ProjectionEngine engine, String name, CountDownLatch holding,
			CountDownLatch release) {
		SegmentedProjection<?> projection = (SegmentedProjection<?>) engine.register(Projection.byTag(name,
				TagFilter.tag(name), AccountEvent.class, EventHandler.blocking((event) -> {
					holding.countDown();
					release.await();
				}), ProjectionSettings.defaults().withSegments(SEGMENTS).withPollInterval(Duration.ofMillis(100))));
		result(engine.startAll());
		await("every segment runs").atMost(Duration.ofSeconds(20)).until(() -> allRunning(projection));
		String entity = name + "-account";
		result(this.journal.append(entity, 0, List.of(EventToAppend.of(new AccountEvent.Deposited(1), name))));
		// Bound: the segment polls every 100 ms.
		await("a handler holds the batch").atMost(Duration.ofSeconds(10)).until(() -> holding.getCount() == 0);
		SegmentedProjection.Segment held = projection.segments().stream().filter((s) -> s.range.contains(this.options.sliceHash().slice(entity)))
			.findFirst().orElseThrow();
		LeaseTerm term = held.term;

		CompletionStage<Void> stopped = engine.stopAll();
		LeaseTable leases = LeaseTable.create(this.keyspace.session(), this.options);
		Set<Long> beats = new HashSet<>();
		// Bound: a renewal every 500 ms; 7 beats seen take about 3 s, past the term's 2.5 s validity.
		await("the stopping instance keeps renewing the segment whose batch is in hand")
			.atMost(LEASE_TIMEOUT.multipliedBy(2)).pollInterval(Duration.ofMillis(100)).until(() -> {
				result(leases.read(name, held.range.key())).ifPresent((lease) -> beats.add(lease.beat()));
				return beats.size() >= 7;
			});
		assertThat(term.valid()).as("the term of the batch in hand").isTrue();
		release.countDown();
		result(stopped);
		assertThat(result(leases.read(name, held.range.key())).orElseThrow().owner()).as("released").isNull();
	}

}
