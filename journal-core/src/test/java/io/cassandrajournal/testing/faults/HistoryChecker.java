package io.cassandrajournal.testing.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Row;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.ConsistencyReport;
import io.cassandrajournal.serialization.EventSerializer;
import io.cassandrajournal.testing.faults.History.OpKind;
import io.cassandrajournal.testing.faults.History.Outcome;

import static io.cassandrajournal.testing.Await.result;

/**
 * Reads the tables after a run (through a session without faults) and checks the history against them. Each
 * rule is one method; a later capability adds its operations to {@link History} and its rule here. The rules
 * run on what was loaded ({@link #addEvent}, {@link #addTagRow}, {@link #addConsistency}, {@link #addSnapshot}),
 * so they can be tested on hand-made histories without Cassandra ({@code HistoryCheckerTest}).
 */
public final class HistoryChecker {

	/** The rules of issue 14. */
	public enum Rule {

		/** Every acknowledged append is present exactly once, at its sequence numbers, in events and tag index. */
		ACKED_PRESENT,
		/** An operation that certainly failed (conflict, definite error, rejection) left no event. */
		FAILED_ABSENT,
		/** No (persistenceId, sequenceNr) holds two different events, in any table; no event is stored twice. */
		ONE_EVENT_PER_SEQUENCE_NR,
		/** An operation with an unknown outcome has all of its events in events, or none. */
		UNKNOWN_ALL_OR_NOTHING,
		/**
		 * An operation with an unknown outcome has the same events in the tag index as in events: the journal
		 * writes both in one logged batch (docs/reliability.md finding 5, fixed), which the batch log applies
		 * all or nothing, eventually; checked after {@link #awaitBatchLogReplayed}. Fails every run.
		 */
		UNKNOWN_TAG_INDEX_SPLIT,
		/**
		 * Sequence numbers are contiguous except where an operation may have claimed them and written nothing
		 * (an unknown outcome, or an append that lost to its own timed-out claim).
		 */
		CONTIGUOUS,
		/**
		 * Every projection saw every stored event its filter selects, and nothing else: its read model equals the
		 * fold of the journal (filtered).
		 */
		PROJECTION,
		/**
		 * Where a projection promises it: by persistenceId, an event is never delivered for the first time after
		 * a later one of its entity; with lanes, never two events of one entity in the handler at once.
		 */
		DELIVERY_ORDER,
		/**
		 * After an acknowledged {@code deleteTo(n)}, a replay returns no event up to n, and at the end no table holds
		 * one; events above n stay (an acknowledged event above every deleteTo of its entity is held to
		 * {@link #ACKED_PRESENT}).
		 */
		DELETED_GONE,
		/** Every stored snapshot equals the fold of the journal up to its sequence number. */
		SNAPSHOT_FOLD,
		/** No account balance is ever negative (fold of the journal in sequence order). */
		INVARIANT

	}

	/**
	 * One broken rule.
	 *
	 * @param rule the rule
	 * @param entity the entity's number
	 * @param sequenceNr the sequence number involved, 0 if none
	 * @param op the operation involved, -1 if none
	 * @param detail what was seen
	 */
	public record Violation(Rule rule, int entity, long sequenceNr, int op, String detail) {
	}

	/** A stored event: which operation wrote it. */
	record Stored(long sequenceNr, long op, int index, long delta) {
	}

	private static final int KEPT_PER_RULE = 20;

	private final @Nullable CqlSession session;

	private final @Nullable CassandraJournalOptions options;

	private final @Nullable EventSerializer serializer;

	private final History history;

	private final Map<Rule, Long> counts = new EnumMap<>(Rule.class);

	private final List<Violation> kept = new ArrayList<>();

	/** Events table: (op, index) to sequence number, and per entity sequence number to event. */
	private final Map<Long, Long> inEvents = new HashMap<>();

	private final Map<Long, Long> inTagIndex = new HashMap<>();

	private final List<TreeMap<Long, Stored>> eventsByEntity = new ArrayList<>();

	private final List<ConsistencyReport> consistency = new ArrayList<>();

	/** Per entity, the sequence numbers the tag index holds (any tag). */
	private final List<TreeSet<Long>> tagRowsByEntity = new ArrayList<>();

	/** Per entity, sequence number to the time stamp of its tag row (any tag), where it was loaded. */
	private final List<Map<Long, Long>> tagRowTimestamps = new ArrayList<>();

	/** Event rows sent later than in-flight-wait after their claim; none if not set. */
	private @Nullable LateWrites lateWrites;

	/** Per entity, snapshot sequence number to the balance it holds. */
	private final List<TreeMap<Long, Long>> snapshotsByEntity = new ArrayList<>();

	/** Per entity, the highest number any deleteTo (whatever its outcome) may have deleted to; 0 if none. */
	private long[] mayBeDeleted = new long[0];

	/** Per entity, the highest number an acknowledged deleteTo deleted to. */
	private long[] deleted = new long[0];

	private long gapsCoveredByUnknown;

	private long gapsCoveredByDelete;

	private long gapsCoveredByLostClaim;

	private long tagRowsLeftByLateBatches;

	/**
	 * @param session a session without faults
	 * @param options the run's journal options
	 * @param serializer reads payloads
	 * @param history the run's history
	 */
	public HistoryChecker(@Nullable CqlSession session, @Nullable CassandraJournalOptions options,
			@Nullable EventSerializer serializer, History history) {
		this.session = session;
		this.options = options;
		this.serializer = serializer;
		this.history = history;
		for (Rule rule : Rule.values()) {
			this.counts.put(rule, 0L);
		}
		for (int e = 0; e < history.entityCount(); e++) {
			this.eventsByEntity.add(new TreeMap<>());
			this.tagRowsByEntity.add(new TreeSet<>());
			this.tagRowTimestamps.add(new HashMap<>());
			this.snapshotsByEntity.add(new TreeMap<>());
		}
	}

	/**
	 * @param late the event rows the run's sessions sent later than in-flight-wait after their claim: a tag row
	 * of one of them, left below a deleteTo, is the documented residual window of finding 7, not a violation
	 * @return this
	 */
	HistoryChecker excusingLateWrites(LateWrites late) {
		this.lateWrites = late;
		return this;
	}

	/**
	 * A checker for tables loaded by hand (the rules' tests): register every entity with the history first.
	 * @param history the history
	 */
	HistoryChecker(History history) {
		this(null, null, null, history);
	}

	/**
	 * @param tags the tags the run wrote under
	 * @param accounts the entity numbers of the bank accounts
	 * @param readModel the projection's read model: per account, sequence number to delta
	 * @param repositoryLostClaims appends a repository made inside a command, lost to their own timed-out claim
	 * @return the violations, by rule and the first few of each
	 */
	Result check(List<String> tags, List<Integer> accounts, Map<String, Map<Long, Long>> readModel,
			List<AttemptRecordingJournal.LostClaim> repositoryLostClaims) {
		return check(tags, accounts, List.of(Deliveries.of("bank", readModel)), repositoryLostClaims);
	}

	/**
	 * @param tags the tags the run wrote under
	 * @param accounts the entity numbers of the bank accounts
	 * @param projections what each projection delivered
	 * @param repositoryLostClaims appends a repository made inside a command, lost to their own timed-out claim
	 * @return the violations, by rule and the first few of each
	 */
	Result check(List<String> tags, List<Integer> accounts, List<Deliveries> projections,
			List<AttemptRecordingJournal.LostClaim> repositoryLostClaims) {
		readTables(tags);
		readSnapshots(accounts);
		return checkLoaded(accounts, projections, repositoryLostClaims);
	}

	/** Runs every rule on what was loaded. */
	Result checkLoaded(List<Integer> accounts, List<Deliveries> projections,
			List<AttemptRecordingJournal.LostClaim> repositoryLostClaims) {
		deletions();
		checkOperations();
		checkDeleted();
		checkContiguous(repositoryLostClaims);
		checkInvariant(accounts);
		checkSnapshots(accounts);
		for (Deliveries projection : projections) {
			checkProjection(accounts, projection);
			checkDeliveryOrder(accounts, projection);
		}
		return new Result(new EnumMap<>(this.counts), List.copyOf(this.kept), this.gapsCoveredByUnknown,
				this.gapsCoveredByLostClaim, this.gapsCoveredByDelete, this.tagRowsLeftByLateBatches);
	}

	/**
	 * Loads one row of {@code events}.
	 * @param entity the entity's number
	 * @param seq its sequence number
	 * @param event its payload
	 */
	void addEvent(int entity, long seq, FaultEvent event) {
		this.eventsByEntity.get(entity).put(seq, new Stored(seq, event.op(), event.index(), event.delta()));
		Long earlier = this.inEvents.put(key(event.op(), event.index()), seq);
		if (earlier != null) {
			violation(Rule.ONE_EVENT_PER_SEQUENCE_NR, entity, seq, (int) event.op(),
					"event " + event.index() + " of the operation is stored at " + earlier + " and at " + seq);
		}
		if (event.op() >= this.history.size() || this.history.entityOf((int) event.op()) != entity) {
			violation(Rule.ONE_EVENT_PER_SEQUENCE_NR, entity, seq, -1,
					"holds an event of operation #" + event.op() + ", which did not write to this entity");
		}
	}

	/**
	 * Loads one row of the tag index (after the entity's events).
	 * @param tag its tag
	 * @param entity the entity's number
	 * @param seq its sequence number
	 * @param event its payload
	 * @param seen the rows of this tag loaded so far, (entity, sequence number) to event
	 */
	void addTagRow(String tag, int entity, long seq, FaultEvent event, Map<Long, Stored> seen) {
		addTagRow(tag, entity, seq, -1, event, seen);
	}

	/**
	 * Loads one row of the tag index (after the entity's events).
	 * @param tag its tag
	 * @param entity the entity's number
	 * @param seq its sequence number
	 * @param timestamp its time stamp (the append's, epoch milliseconds)
	 * @param event its payload
	 * @param seen the rows of this tag loaded so far, (entity, sequence number) to event
	 */
	void addTagRow(String tag, int entity, long seq, long timestamp, FaultEvent event, Map<Long, Stored> seen) {
		this.tagRowTimestamps.get(entity).put(seq, timestamp);
		Stored stored = new Stored(seq, event.op(), event.index(), event.delta());
		Stored twice = seen.put(((long) entity << 40) | seq, stored);
		if (twice != null) {
			violation(Rule.ONE_EVENT_PER_SEQUENCE_NR, entity, seq, (int) event.op(), "the tag index of '" + tag
					+ "' holds two rows for it (operations #" + twice.op() + " and #" + event.op() + ")");
		}
		Stored inEventsTable = this.eventsByEntity.get(entity).get(seq);
		if (inEventsTable != null && (inEventsTable.op() != event.op() || inEventsTable.index() != event.index())) {
			violation(Rule.ONE_EVENT_PER_SEQUENCE_NR, entity, seq, (int) event.op(), "events holds #"
					+ inEventsTable.op() + "/" + inEventsTable.index() + ", the tag index #" + event.op() + "/"
					+ event.index());
		}
		this.inTagIndex.put(key(event.op(), event.index()), seq);
		this.tagRowsByEntity.get(entity).add(seq);
	}

	/** @param report an entity's consistency report, in entity order */
	void addConsistency(ConsistencyReport report) {
		this.consistency.add(report);
	}

	/**
	 * @param entity an account
	 * @param seq the snapshot's sequence number
	 * @param balance the balance it holds
	 */
	void addSnapshot(int entity, long seq, long balance) {
		this.snapshotsByEntity.get(entity).put(seq, balance);
	}

	/**
	 * Waits until no node holds a logged batch that is not yet fully applied ({@code system.batches} empty on
	 * every node), so that the tables are checked as they converge: a batch whose coordinator was killed after
	 * writing its batch log is applied by the batch log's replay, which runs every 10 s (after the node's ring
	 * delay on a restart) for batches older than twice the write timeout (4 s by default). Bound: 60 s, three
	 * times the worst case of about 15 s plus a restarted node's start-up; what is still split after it is
	 * reported by the rule.
	 * @param bound how long to wait at most
	 * @return whether every node's batch log was empty within the bound
	 */
	boolean awaitBatchLogReplayed(Duration bound) {
		long started = System.nanoTime();
		try {
			Awaitility.await("batch log replayed on every node")
				.atMost(bound)
				.pollInterval(Duration.ofMillis(500))
				.ignoreExceptions()
				.until(() -> this.session.getMetadata().getNodes().values().stream()
					.allMatch((node) -> this.session.execute(SimpleStatement.newInstance("SELECT id FROM system.batches LIMIT 1")
						.setNode(node)).one() == null));
			System.out.println("batch log: empty on every node after " + (System.nanoTime() - started) / 1_000_000 + " ms");
			return true;
		}
		catch (ConditionTimeoutException ex) {
			System.out.println("batch log: still holds batches after " + bound + " (" + ex.getMessage() + ")");
			return false;
		}
	}

	private static long key(long op, int index) {
		return (op << 16) | index;
	}

	private void readTables(List<String> tags) {
		CqlSession session = java.util.Objects.requireNonNull(this.session);
		CassandraJournalOptions options = java.util.Objects.requireNonNull(this.options);
		EventSerializer serializer = java.util.Objects.requireNonNull(this.serializer);
		CassandraJournal journal = CassandraJournal.create(session, options, serializer);
		String ks = options.requireKeyspace();
		Map<String, Integer> entityNumbers = new HashMap<>();
		for (int e = 0; e < this.history.entityCount(); e++) {
			String pid = this.history.entityName(e);
			entityNumbers.put(pid, e);
			ConsistencyReport report = result(journal.checkConsistency(pid));
			addConsistency(report);
			for (long partition = 0; partition <= report.head() / options.partitionSize(); partition++) {
				for (Row row : session.execute(read("SELECT sequence_nr, payload FROM " + ks + "."
						+ options.eventsTable() + " WHERE persistence_id = ? AND partition_nr = ?", pid, partition))) {
					addEvent(e, row.getLong("sequence_nr"), serializer.deserialize(row.getString("payload"), FaultEvent.class));
				}
			}
		}
		for (String tag : tags) {
			Map<Long, Stored> seen = new HashMap<>();
			for (Row row : session.execute(read("SELECT timestamp, persistence_id, sequence_nr, payload FROM " + ks
					+ "." + options.tagIndexTable() + " WHERE tag = ?", tag))) {
				Integer e = entityNumbers.get(row.getString("persistence_id"));
				if (e != null) {
					addTagRow(tag, e, row.getLong("sequence_nr"), row.getLong("timestamp"),
							serializer.deserialize(row.getString("payload"), FaultEvent.class), seen);
				}
			}
		}
	}

	private void readSnapshots(List<Integer> accounts) {
		CqlSession session = java.util.Objects.requireNonNull(this.session);
		CassandraJournalOptions options = java.util.Objects.requireNonNull(this.options);
		EventSerializer serializer = java.util.Objects.requireNonNull(this.serializer);
		for (int e : accounts) {
			for (Row row : session.execute(read("SELECT sequence_nr, payload FROM " + options.requireKeyspace() + "."
					+ options.snapshotsTable() + " WHERE persistence_id = ?", this.history.entityName(e)))) {
				addSnapshot(e, row.getLong("sequence_nr"),
						serializer.deserialize(row.getString("payload"), Account.class).balance());
			}
		}
	}

	/** Reads at the journal's consistency level: on a cluster a replica that was down may lack hinted writes. */
	private SimpleStatement read(String cql, Object... values) {
		return SimpleStatement.newInstance(cql, values)
			.setConsistencyLevel(java.util.Objects.requireNonNull(this.options).consistency());
	}

	private void checkOperations() {
		for (int op = 0; op < this.history.size(); op++) {
			Outcome outcome = this.history.outcome(op);
			int n = this.history.events(op);
			int entity = this.history.entityOf(op);
			int inEvents = 0;
			int inTags = 0;
			for (int i = 0; i < n; i++) {
				Long seq = this.inEvents.get(key(op, i));
				Long tagSeq = this.inTagIndex.get(key(op, i));
				inEvents += (seq != null) ? 1 : 0;
				inTags += (tagSeq != null) ? 1 : 0;
				if (outcome == Outcome.OK && this.history.first(op) + i > this.mayBeDeleted[entity]) {
					long want = this.history.first(op) + i;
					if (seq == null || seq != want) {
						violation(Rule.ACKED_PRESENT, entity, want, op, "acknowledged event " + i + " is "
								+ ((seq == null) ? "missing from events" : "at " + seq));
					}
					if (tagSeq == null || tagSeq != want) {
						violation(Rule.ACKED_PRESENT, entity, want, op, "acknowledged event " + i + " is "
								+ ((tagSeq == null) ? "missing from the tag index" : "at " + tagSeq + " in the tag index"));
					}
					if (seq != null && seq == want) {
						checkAmount(op, entity, want);
					}
				}
			}
			if ((outcome == Outcome.FAILED || outcome == Outcome.REJECTED) && (inEvents + inTags) > 0) {
				Long at = this.inEvents.get(key(op, 0));
				violation(Rule.FAILED_ABSENT, entity, (at != null) ? at : 0, op, "reported " + outcome + ", yet "
						+ inEvents + " of its " + n + " events are in events and " + inTags + " in the tag index");
			}
			boolean partlyDeleted = this.history.kind(op) == OpKind.APPEND
					&& this.history.expected(op) + 1 <= this.mayBeDeleted[entity];
			if ((outcome == Outcome.UNKNOWN || outcome == Outcome.PENDING) && (inEvents + inTags) > 0
					&& (inEvents != n || inTags != n) && !partlyDeleted) {
				violation((inEvents == 0 || inEvents == n) ? Rule.UNKNOWN_TAG_INDEX_SPLIT : Rule.UNKNOWN_ALL_OR_NOTHING,
						entity, this.history.first(op), op, "outcome unknown; " + inEvents + " of its " + n
								+ " events are in events and " + inTags + " in the tag index");
			}
		}
	}

	private void checkAmount(int op, int entity, long seq) {
		OpKind kind = this.history.kind(op);
		if (kind == OpKind.APPEND) {
			return;
		}
		long want = (kind == OpKind.DEPOSIT) ? this.history.value(op) : -this.history.value(op);
		long got = this.eventsByEntity.get(entity).get(seq).delta();
		if (got != want) {
			violation(Rule.ACKED_PRESENT, entity, seq, op, "stored delta " + got + ", the command asked " + want);
		}
	}

	/** A missing number is explained when an operation on the entity may have claimed it and written nothing. */
	private void checkContiguous(List<AttemptRecordingJournal.LostClaim> repositoryLostClaims) {
		List<List<long[]>> mayHaveClaimed = new ArrayList<>();
		List<List<long[]>> lostClaims = new ArrayList<>();
		Map<String, Integer> numbers = new HashMap<>();
		for (int e = 0; e < this.history.entityCount(); e++) {
			mayHaveClaimed.add(new ArrayList<>());
			lostClaims.add(new ArrayList<>());
			numbers.put(this.history.entityName(e), e);
		}
		for (AttemptRecordingJournal.LostClaim lost : repositoryLostClaims) {
			Integer e = numbers.get(lost.persistenceId());
			if (e != null) {
				lostClaims.get(e).add(new long[] { lost.from(), lost.to() });
			}
		}
		for (int op = 0; op < this.history.size(); op++) {
			Outcome outcome = this.history.outcome(op);
			int e = this.history.entityOf(op);
			// An unknown outcome with its range (JournalWriteUncertainException); other unknowns are covered by the
			// attempts the journals recorded, never by a blanket range.
			if ((outcome == Outcome.UNKNOWN || outcome == Outcome.PENDING) && this.history.first(op) > 0) {
				mayHaveClaimed.get(e).add(new long[] { this.history.first(op), this.history.last(op) });
			}
			// A claim that timed out, applied, and was then reported as a conflict: its head is exactly the claim.
			if (outcome == Outcome.FAILED && this.history.kind(op) == OpKind.APPEND
					&& this.history.last(op) == this.history.expected(op) + this.history.events(op)) {
				lostClaims.get(e).add(new long[] { this.history.expected(op) + 1, this.history.last(op) });
			}
		}
		for (int e = 0; e < this.consistency.size(); e++) {
			ConsistencyReport report = this.consistency.get(e);
			for (ConsistencyReport.SequenceRange range : report.missing()) {
				for (long seq = range.from(); seq <= range.to(); seq++) {
					if (seq <= this.mayBeDeleted[e]) {
						// A deleteTo that failed part-way records no mark: its range reads as a gap.
						this.gapsCoveredByDelete++;
					}
					else if (covered(mayHaveClaimed.get(e), seq)) {
						this.gapsCoveredByUnknown++;
					}
					else if (covered(lostClaims.get(e), seq)) {
						this.gapsCoveredByLostClaim++;
					}
					else {
						violation(Rule.CONTIGUOUS, e, seq, -1, "no event, and no operation may have claimed it");
					}
				}
			}
			TreeMap<Long, Stored> events = this.eventsByEntity.get(e);
			if (!events.isEmpty() && events.lastKey() > report.head()) {
				violation(Rule.CONTIGUOUS, e, events.lastKey(), -1, "an event above the head " + report.head());
			}
		}
	}

	private static boolean covered(List<long[]> ranges, long seq) {
		for (long[] range : ranges) {
			if (seq >= range[0] && seq <= range[1]) {
				return true;
			}
		}
		return false;
	}

	private void checkInvariant(List<Integer> accounts) {
		for (int e : accounts) {
			long balance = 0;
			for (Stored event : this.eventsByEntity.get(e).values()) {
				balance += event.delta();
				if (balance < 0) {
					violation(Rule.INVARIANT, e, event.sequenceNr(), (int) event.op(), "balance " + balance);
					break;
				}
			}
		}
	}

	/** Per entity, how far deleteTo ops (any outcome) may have deleted, and how far acknowledged ones did. */
	private void deletions() {
		this.mayBeDeleted = new long[this.history.entityCount()];
		this.deleted = new long[this.history.entityCount()];
		for (int op = 0; op < this.history.size(); op++) {
			if (this.history.kind(op) == OpKind.DELETE_TO) {
				int e = this.history.entityOf(op);
				long to = this.history.expected(op);
				this.mayBeDeleted[e] = Math.max(this.mayBeDeleted[e], to);
				if (this.history.outcome(op) == Outcome.OK) {
					this.deleted[e] = Math.max(this.deleted[e], to);
				}
			}
		}
	}

	/**
	 * An acknowledged deleteTo(n): the replay its client made right after it returned nothing up to n (the
	 * operation's range holds the lowest and highest number that replay returned), and no table holds an event up
	 * to n at the end. One exception, the documented residual window (finding 7): a tag row whose append's batch
	 * was sent more than in-flight-wait after its claim ({@link LateWrites}, matched on entity, number and the
	 * row's time stamp) while {@code events} no longer holds the event; it is counted, not excused otherwise.
	 */
	private void checkDeleted() {
		for (int op = 0; op < this.history.size(); op++) {
			if (this.history.kind(op) == OpKind.DELETE_TO && this.history.outcome(op) == Outcome.OK
					&& this.history.first(op) > 0 && this.history.first(op) <= this.history.expected(op)) {
				violation(Rule.DELETED_GONE, this.history.entityOf(op), this.history.first(op), op, "a replay right after "
						+ "deleteTo(" + this.history.expected(op) + ") returned " + this.history.first(op));
			}
		}
		for (int e = 0; e < this.eventsByEntity.size(); e++) {
			long to = this.deleted[e];
			if (to == 0) {
				continue;
			}
			for (long seq : this.eventsByEntity.get(e).headMap(to, true).keySet()) {
				violation(Rule.DELETED_GONE, e, seq, -1, "events still holds it after deleteTo(" + to + ")");
			}
			for (long seq : this.tagRowsByEntity.get(e).headSet(to, true)) {
				if (leftByLateBatch(e, seq)) {
					this.tagRowsLeftByLateBatches++;
				}
				else {
					violation(Rule.DELETED_GONE, e, seq, -1, "the tag index still holds it after deleteTo(" + to + ")");
				}
			}
		}
	}

	/** The residual window of finding 7: the event is gone from events, and its row was sent late. */
	private boolean leftByLateBatch(int entity, long seq) {
		Long timestamp = this.tagRowTimestamps.get(entity).get(seq);
		return this.lateWrites != null && timestamp != null && !this.eventsByEntity.get(entity).containsKey(seq)
				&& this.lateWrites.contains(this.history.entityName(entity), seq, timestamp);
	}

	private void checkSnapshots(List<Integer> accounts) {
		for (int e : accounts) {
			TreeMap<Long, Stored> events = this.eventsByEntity.get(e);
			for (Map.Entry<Long, Long> snapshot : this.snapshotsByEntity.get(e).entrySet()) {
				long fold = 0;
				for (Stored event : events.headMap(snapshot.getKey(), true).values()) {
					fold += event.delta();
				}
				if (fold != snapshot.getValue()) {
					violation(Rule.SNAPSHOT_FOLD, e, snapshot.getKey(), -1, "the snapshot holds balance "
							+ snapshot.getValue() + ", the journal folds to " + fold);
				}
			}
		}
	}

	private void checkProjection(List<Integer> accounts, Deliveries projection) {
		for (int e : accounts) {
			Map<Long, Long> model = projection.model().getOrDefault(this.history.entityName(e), Map.of());
			TreeMap<Long, Stored> events = this.eventsByEntity.get(e);
			for (Stored event : events.values()) {
				if (!projection.expects(event.delta())) {
					continue;
				}
				Outcome writer = (event.op() < this.history.size()) ? this.history.outcome((int) event.op()) : Outcome.OK;
				if (projection.readsTagIndex() && !this.inTagIndex.containsKey(key(event.op(), event.index()))
						&& (writer == Outcome.UNKNOWN || writer == Outcome.PENDING)) {
					// Finding 5: an unknown append left it without its tag row; UNKNOWN_TAG_INDEX_SPLIT counts it.
					continue;
				}
				Long seen = model.get(event.sequenceNr());
				if (seen == null || seen != event.delta()) {
					violation(Rule.PROJECTION, e, event.sequenceNr(), (int) event.op(), projection.name() + ": "
							+ ((seen == null) ? "never delivered" : "delivered with delta " + seen + ", journal " + event.delta()));
				}
			}
			for (Map.Entry<Long, Long> delivered : model.entrySet()) {
				Stored stored = events.get(delivered.getKey());
				if (stored == null) {
					violation(Rule.PROJECTION, e, delivered.getKey(), -1, projection.name() + ": delivered, but not in events");
				}
				else if (!projection.expects(stored.delta())) {
					violation(Rule.PROJECTION, e, delivered.getKey(), (int) stored.op(),
							projection.name() + ": delivered, but its filter excludes it");
				}
			}
		}
	}

	private void checkDeliveryOrder(List<Integer> accounts, Deliveries projection) {
		if (projection.promise() == Deliveries.Promise.ONE_AT_A_TIME_PER_ENTITY && projection.overlaps() > 0) {
			violation(Rule.DELIVERY_ORDER, accounts.isEmpty() ? 0 : accounts.get(0), 0, -1, projection.name() + ": "
					+ projection.overlaps() + " times two events of one entity were in the handler at once, first "
					+ projection.firstOverlap());
		}
		if (projection.promise() != Deliveries.Promise.PER_ENTITY_ORDER) {
			return;
		}
		for (int e : accounts) {
			long highest = 0;
			java.util.Set<Long> seen = new java.util.HashSet<>();
			for (long seq : projection.order(this.history.entityName(e))) {
				// A redelivery (after a failed offset save or a restart) may go back; a first delivery may not, except
				// an event of an unknown outcome: its numbers may have been stepped over as a crash gap before it
				// appeared (finding 11), and it is then delivered late by the projection's crash-gap recheck.
				if (seen.add(seq) && seq < highest && !writtenByUnknownOutcome(e, seq)) {
					violation(Rule.DELIVERY_ORDER, e, seq, -1, projection.name() + ": first delivered after " + highest);
				}
				highest = Math.max(highest, seq);
			}
		}
	}

	private boolean writtenByUnknownOutcome(int entity, long seq) {
		Stored event = this.eventsByEntity.get(entity).get(seq);
		if (event == null || event.op() >= this.history.size()) {
			return false;
		}
		Outcome writer = this.history.outcome((int) event.op());
		return writer == Outcome.UNKNOWN || writer == Outcome.PENDING;
	}

	private void violation(Rule rule, int entity, long seq, int op, String detail) {
		long count = this.counts.merge(rule, 1L, Long::sum);
		if (count <= KEPT_PER_RULE) {
			this.kept.add(new Violation(rule, entity, seq, op, detail));
		}
	}

	/**
	 * The shortest stretch of history that shows a violation: the operations on its entity that touched its
	 * sequence number (claimed, wrote or may have written it), in invocation order.
	 * @param violation a violation
	 * @param limit the most lines to show
	 * @return the lines
	 */
	public List<String> excerpt(Violation violation, int limit) {
		List<String> lines = new ArrayList<>();
		long seq = violation.sequenceNr();
		for (int op = 0; op < this.history.size() && lines.size() < limit; op++) {
			if (this.history.entityOf(op) != violation.entity()) {
				continue;
			}
			boolean touches = op == violation.op();
			if (!touches && seq > 0) {
				long expected = this.history.expected(op);
				boolean append = this.history.kind(op) == OpKind.APPEND;
				boolean delete = this.history.kind(op) == OpKind.DELETE_TO;
				touches = (append && seq > expected && seq <= expected + this.history.events(op)) || (delete && seq <= expected)
						|| (this.history.first(op) > 0 && seq >= this.history.first(op) && seq <= this.history.last(op));
			}
			if (touches) {
				lines.add(this.history.describe(op));
			}
		}
		return lines;
	}

	/**
	 * @param violations how many per rule
	 * @param first the first few of each rule
	 * @param gapsCoveredByUnknown missing numbers an operation with an unknown outcome may have claimed
	 * @param gapsCoveredByLostClaim missing numbers of a claim that timed out and was reported as a conflict
	 * @param gapsCoveredByDelete missing numbers a deleteTo may have removed without recording it
	 * @param tagRowsLeftByLateBatches tag rows left below a deleteTo by a batch sent more than in-flight-wait after
	 * its claim (the residual window of finding 7)
	 */
	public record Result(Map<Rule, Long> violations, List<Violation> first, long gapsCoveredByUnknown,
			long gapsCoveredByLostClaim, long gapsCoveredByDelete, long tagRowsLeftByLateBatches) {

		public long total() {
			return this.violations.values().stream().mapToLong(Long::longValue).sum();
		}

	}

}
