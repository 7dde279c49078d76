package io.cassandrajournal.serialization;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.JournalSerializationException;
import io.cassandrajournal.entity.CommandResult;
import io.cassandrajournal.entity.EntityRepository;
import io.cassandrajournal.entity.EventSourcedEntity;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.projection.CassandraDeadLetterQueue;
import io.cassandrajournal.projection.DeadLetter;
import io.cassandrajournal.projection.EventHandler;
import io.cassandrajournal.projection.Projection;
import io.cassandrajournal.projection.ProjectionControl;
import io.cassandrajournal.projection.ProjectionEngine;
import io.cassandrajournal.projection.ProjectionSettings;
import io.cassandrajournal.projection.RecoveryStrategy;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.EventsPage;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.query.TaggedEvent;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.snapshot.Snapshot;
import io.cassandrajournal.testing.LedgerEvents;
import io.cassandrajournal.testing.LedgerEvents.Ledger;
import io.cassandrajournal.testing.LedgerEvents.Ledger.FundsAdded;
import io.cassandrajournal.testing.LedgerEvents.Ledger.FundsRemoved;
import io.cassandrajournal.testing.LedgerEvents.Ledger.TransferNoted;
import io.cassandrajournal.testing.LedgerEvents.V1;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A keyspace written by a release whose events were at version 1, read by the current release through its
 * upcasters (a rename, a second step, a split) on every read path: replay, an entity command, a tag query,
 * a tag projection, a redelivered dead letter; and an upcaster that throws, on an entity load and on a
 * projection. Stored events are never rewritten.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UpcastingIT {

	private static final String V1_DEPOSITED = "{\"kind\":\"deposited\",\"amount\":5}";

	private static final String V1_TRANSFERRED = "{\"kind\":\"transferred\",\"amount\":2,\"to\":\"bob\"}";

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	/** The old release: version 1 classes, no upcasters. */
	private CassandraJournal oldJournal;

	private JacksonEventSerializer serializer;

	private CassandraJournal journal;

	private CassandraReadJournal query;

	private CassandraDeadLetterQueue deadLetters;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		this.oldJournal = CassandraJournal.create(keyspace.session(), this.options, new JacksonEventSerializer());
		this.serializer = new JacksonEventSerializer(LedgerEvents.upcasters());
		this.journal = CassandraJournal.create(keyspace.session(), this.options, this.serializer);
		this.query = CassandraReadJournal.create(this.journal, keyspace.session(), this.options, this.serializer);
		this.deadLetters = CassandraDeadLetterQueue.create(keyspace.session(), this.options, "upcast_dead_letters");
	}

	/** Writes deposited(5), transferred(2, bob), deposited(1) as the old release did. */
	private void writeVersionOne(String persistenceId, String tag) {
		result(this.oldJournal.append(persistenceId, 0, List.of(EventToAppend.of(new V1.Deposited(5), tag),
				EventToAppend.of(new V1.Transferred(2, "bob"), tag), EventToAppend.of(new V1.Deposited(1), tag))));
	}

	private static String describe(PersistentEvent<Ledger> event) {
		return event.sequenceNr() + ":" + event.payload();
	}

	private static final List<String> EXPECTED = List.of("1:" + new FundsAdded(500, "EUR"),
			"2:" + new FundsRemoved(200, "EUR"), "2:" + new TransferNoted("bob"), "3:" + new FundsAdded(100, "EUR"));

	@Test
	void replayReadsVersionOneEventsAsCurrentTypesAndLeavesThemStoredAsTheyWere() {
		String pid = "replay-" + System.nanoTime();
		writeVersionOne(pid, "replay");
		List<String> read = new CopyOnWriteArrayList<>();
		assertThat(result(this.journal.replay(pid, 1, Long.MAX_VALUE, Ledger.class, (event) -> read.add(describe(event)))))
			.isEqualTo(3L);
		assertThat(read).as("the split's parts share the stored event's sequence number").isEqualTo(EXPECTED);
		List<String> contiguous = new CopyOnWriteArrayList<>();
		result(this.journal.replayContiguous(pid, 1, Long.MAX_VALUE, Ledger.class, (event) -> contiguous.add(describe(event))));
		assertThat(contiguous).isEqualTo(EXPECTED);
		List<String> stored = new ArrayList<>();
		result(this.journal.replayRaw(pid, 1, Long.MAX_VALUE, (event) -> stored.add(event.payload())));
		assertThat(stored).containsExactly(V1_DEPOSITED, V1_TRANSFERRED, "{\"kind\":\"deposited\",\"amount\":1}");
	}

	/**
	 * Events an intermediate release wrote at version 2 (stamped), read through the declared funds-added step on the
	 * token stream on replay and on a tag query; one stamped before its other properties (another writer) goes through
	 * the tree, with the same result.
	 */
	@Test
	void versionTwoEventsReadThroughTheDeclaredStepOnEveryPath() {
		String pid = "declared-" + System.nanoTime();
		String tag = "declared-" + System.nanoTime();
		java.util.Map<String, Object> atEnd = new java.util.LinkedHashMap<>();
		atEnd.put("kind", "funds-added");
		atEnd.put("amountCents", 300);
		atEnd.put("_version", 2);
		java.util.Map<String, Object> first = new java.util.LinkedHashMap<>();
		first.put("_version", 2);
		first.put("kind", "funds-added");
		first.put("amountCents", 40);
		result(this.oldJournal.append(pid, 0, List.of(EventToAppend.of(atEnd, tag), EventToAppend.of(first, tag))));
		List<String> stored = new ArrayList<>();
		result(this.journal.replayRaw(pid, 1, Long.MAX_VALUE, (event) -> stored.add(event.payload())));
		assertThat(stored).containsExactly("{\"kind\":\"funds-added\",\"amountCents\":300,\"_version\":2}",
				"{\"_version\":2,\"kind\":\"funds-added\",\"amountCents\":40}");
		List<String> expected = List.of("1:" + new FundsAdded(300, "EUR"), "2:" + new FundsAdded(40, "EUR"));
		List<String> replayed = new CopyOnWriteArrayList<>();
		result(this.journal.replay(pid, 1, Long.MAX_VALUE, Ledger.class, (event) -> replayed.add(describe(event))));
		assertThat(replayed).isEqualTo(expected);
		EventsPage<Ledger> page = result(this.query.currentEventsByTag(TagFilter.tag(tag), TagOffset.START, 100,
				Ledger.class));
		assertThat(page.events()).extracting((event) -> describe(event.event())).isEqualTo(expected);
	}

	/** A ledger that refuses to go below zero; its balance is in cents. */
	static final class LedgerEntity implements EventSourcedEntity<Long, Ledger> {

		@Override
		public Long emptyState() {
			return 0L;
		}

		@Override
		public Long applyEvent(Long balance, Ledger event) {
			return LedgerEvents.apply(balance, event);
		}

		@Override
		public Class<Ledger> eventType() {
			return Ledger.class;
		}

		@Override
		public Class<Long> stateType() {
			return Long.class;
		}

	}

	@Test
	void anEntityCommandDecidesOnUpcastEventsAndAppendsTheCurrentVersion() {
		String pid = "entity-" + System.nanoTime();
		writeVersionOne(pid, "entity");
		EntityRepository<Long, Ledger> ledgers = EntityRepository.create(this.journal, null, new LedgerEntity(), 3);
		CommandResult<Long, Ledger> result = result(ledgers.execute(pid, (state) -> {
			assertThat(state.state()).isEqualTo(500L - 200 + 100);
			assertThat(state.sequenceNr()).isEqualTo(3L);
			return List.of(new FundsRemoved(350, "EUR"));
		}));
		assertThat(result.state().state()).isEqualTo(50L);
		assertThat(result.state().sequenceNr()).isEqualTo(4L);
		List<String> stored = new ArrayList<>();
		result(this.journal.replayRaw(pid, 4, 4, (event) -> stored.add(event.payload())));
		assertThat(stored).containsExactly("{\"kind\":\"funds-removed\",\"amountCents\":350,\"currency\":\"EUR\",\"_version\":3}");
		assertThat(result(ledgers.load(pid)).state()).isEqualTo(50L);
	}

	@Test
	void anUpcasterThatThrowsOnAnEntityLoadFailsTheCommandNamingTheEventAndTheUpcaster() {
		String pid = "broken-entity-" + System.nanoTime();
		writeVersionOne(pid, "broken-entity");
		JacksonEventSerializer broken = new JacksonEventSerializer(Upcasters.builder()
			.add(LedgerEvents.DEPOSITED_V1)
			.add(LedgerEvents.FUNDS_ADDED_V2)
			.add(LedgerEvents.FUNDS_REMOVED_V2)
			.add(new ThrowingTransferUpcaster())
			.build());
		CassandraJournal brokenJournal = CassandraJournal.create(this.keyspace.session(), this.options, broken);
		EntityRepository<Long, Ledger> ledgers = EntityRepository.create(brokenJournal, null, new LedgerEntity(), 3);
		assertThatExceptionOfType(JournalSerializationException.class)
			.isThrownBy(() -> result(ledgers.execute(pid, (state) -> List.of())))
			.withMessageContaining("Event " + pid + "#2")
			.withMessageContaining("Upcaster '" + ThrowingTransferUpcaster.class.getName() + "'")
			.withMessageContaining("no recipient");
		List<String> stored = new ArrayList<>();
		result(this.journal.replayRaw(pid, 1, Long.MAX_VALUE, (event) -> stored.add(event.payload())));
		assertThat(stored).as("nothing appended").hasSize(3);
	}

	/** transferred v1 that cannot be read. */
	static final class ThrowingTransferUpcaster implements EventUpcaster {

		@Override
		public String kind() {
			return "transferred";
		}

		@Override
		public int fromVersion() {
			return 1;
		}

		@Override
		public List<tools.jackson.databind.node.ObjectNode> upcast(tools.jackson.databind.node.ObjectNode event) {
			throw new IllegalStateException("no recipient in " + event);
		}

	}

	@Test
	void aTagQueryGivesTheSplitPartsTheStoredEventsOffset() {
		String tag = "query-" + System.nanoTime();
		writeVersionOne(tag + "-a", tag);
		EventsPage<Ledger> page = result(this.query.currentEventsByTag(TagFilter.tag(tag), TagOffset.START, 100,
				Ledger.class));
		assertThat(page.events()).extracting((event) -> describe(event.event())).isEqualTo(EXPECTED);
		List<TaggedEvent<Ledger>> events = page.events();
		assertThat(events.get(1).offset()).isEqualTo(events.get(2).offset());
		assertThat(events.get(0).offset()).isNotEqualTo(events.get(1).offset());
		List<String> streamed = new CopyOnWriteArrayList<>();
		result(this.query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START, Ledger.class,
				(event) -> streamed.add(describe(event.event()))));
		assertThat(streamed).isEqualTo(EXPECTED);
	}

	private ProjectionEngine engine() {
		return ProjectionEngine.builder(this.journal).readJournal(this.query).deadLetterQueue(this.deadLetters).build();
	}

	@Test
	void aTagProjectionAndARedeliveredDeadLetterSeeCurrentTypes() {
		String tag = "projection-" + System.nanoTime();
		writeVersionOne(tag + "-a", tag);
		AtomicBoolean broken = new AtomicBoolean(true);
		List<String> handled = new CopyOnWriteArrayList<>();
		try (ProjectionEngine engine = engine()) {
			ProjectionControl control = engine.register(Projection.byTag("upcast-" + tag, TagFilter.tag(tag),
					Ledger.class, EventHandler.blocking((event) -> {
						if (broken.get() && event.payload() instanceof TransferNoted) {
							throw new IllegalStateException("cannot note transfers yet");
						}
						handled.add(describe(event));
					}), ProjectionSettings.defaults().withRecoveryStrategy(RecoveryStrategy.SKIP)));
			result(control.start());
			await().atMost(Duration.ofSeconds(30))
				.until(() -> handled.size() == 3 && result(control.deadLetters(10)).size() == 1);
			assertThat(handled).containsExactly(EXPECTED.get(0), EXPECTED.get(1), EXPECTED.get(3));
			DeadLetter letter = result(control.deadLetters(10)).get(0);
			assertThat(letter.event().sequenceNr()).isEqualTo(2L);
			assertThat(letter.event().payload()).as("the stored event, as stored").isEqualTo(V1_TRANSFERRED);
			broken.set(false);
			assertThat(result(control.redeliverDeadLetters())).isEqualTo(1);
			assertThat(handled.subList(3, handled.size()))
				.as("redelivery reads the stored event through the upcasters: both parts, in order")
				.containsExactly(EXPECTED.get(1), EXPECTED.get(2));
		}
	}

	@Test
	void anUpcasterThatThrowsOnAProjectionGoesThroughItsRecoveryStrategy() {
		String tag = "broken-projection-" + System.nanoTime();
		writeVersionOne(tag + "-a", tag);
		JacksonEventSerializer broken = new JacksonEventSerializer(Upcasters.builder()
			.add(LedgerEvents.DEPOSITED_V1)
			.add(LedgerEvents.FUNDS_ADDED_V2)
			.add(new ThrowingTransferUpcaster())
			.build());
		List<String> handled = new CopyOnWriteArrayList<>();
		try (ProjectionEngine engine = ProjectionEngine.builder(this.journal)
			.readJournal(CassandraReadJournal.create(this.journal, this.keyspace.session(), this.options, broken))
			.deadLetterQueue(this.deadLetters)
			.build()) {
			ProjectionControl control = engine.register(Projection.byTag("broken-" + tag, TagFilter.tag(tag),
					Ledger.class, EventHandler.blocking((event) -> handled.add(describe(event))),
					ProjectionSettings.defaults().withRecoveryStrategy(RecoveryStrategy.SKIP)));
			result(control.start());
			await().atMost(Duration.ofSeconds(30))
				.until(() -> handled.size() == 2 && result(control.deadLetters(10)).size() == 1);
			assertThat(handled).containsExactly(EXPECTED.get(0), EXPECTED.get(3));
			DeadLetter letter = result(control.deadLetters(10)).get(0);
			assertThat(letter.event().sequenceNr()).isEqualTo(2L);
			assertThat(letter.error()).contains("Upcaster '" + ThrowingTransferUpcaster.class.getName() + "'")
				.contains("no recipient");
		}
	}

	/** A snapshot state as version 1 wrote it: whole euros. */
	record OldBalance(long euros) {
	}

	/** The current snapshot state: cents, at version 2. */
	@PayloadVersion(2)
	record Balance(long cents) {
	}

	@Test
	void aVersionOneSnapshotIsReadThroughItsClassesChainAndANewOneIsStamped() {
		String pid = "snapshot-" + System.nanoTime();
		result(CassandraSnapshotStore.create(this.keyspace.session(), this.options, new JacksonEventSerializer())
			.save(pid, 3, new OldBalance(4)));
		CassandraSnapshotStore snapshots = CassandraSnapshotStore.create(this.keyspace.session(), this.options,
				new JacksonEventSerializer(Upcasters.builder()
					.snapshot(Balance.class, 1, (state) -> state.put("cents", state.remove("euros").asLong() * 100))
					.build()));
		assertThat(result(snapshots.loadLatest(pid, Long.MAX_VALUE, Balance.class))).get()
			.extracting(Snapshot::state).isEqualTo(new Balance(400));
		result(snapshots.save(pid, 5, new Balance(900)));
		assertThat(result(snapshots.loadLatest(pid, Long.MAX_VALUE, Balance.class))).get()
			.extracting(Snapshot::state).isEqualTo(new Balance(900));
		assertThat(result(CassandraSnapshotStore.create(this.keyspace.session(), this.options,
				new JacksonEventSerializer()).loadLatest(pid, Long.MAX_VALUE, Object.class))).get()
			.extracting(Snapshot::state).as("stored stamped, read back without it by a generic reader")
			.hasToString("{cents=900}");
	}

}
