package io.cassandrajournal.retention;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.TagBucketing;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.snapshot.CassandraSnapshotStore;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.FaultInjectingSession;
import io.cassandrajournal.testing.JournalFixture;
import io.cassandrajournal.testing.SettableClock;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static io.cassandrajournal.testing.JournalFixture.deposits;
import static io.cassandrajournal.testing.JournalFixture.journal;
import static io.cassandrajournal.testing.JournalFixture.newId;
import static io.cassandrajournal.testing.JournalFixture.replayed;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link JournalCleanup} on a real node: a whole entity in every tag layout, the race with an append, events
 * before a kept snapshot, and whole tag buckets.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class JournalCleanupIT {

	private JournalFixture fixture;

	private CassandraJournalOptions options;

	@BeforeAll
	void createTables(TestKeyspace keyspace) {
		this.fixture = new JournalFixture(keyspace);
		this.options = this.fixture.options();
		CassandraSnapshotStore.create(session(), this.options, new JacksonEventSerializer());
		CassandraDurableStateStore.create(session(), this.options, new JacksonEventSerializer());
	}

	private CqlSession session() {
		return this.fixture.session();
	}

	private static List<String> byTag(CassandraReadJournal query, String tag) {
		List<String> seen = new ArrayList<>();
		result(query.forEachCurrentEventByTag(TagFilter.tag(tag), TagOffset.START, String.class,
				(e) -> seen.add(e.event().persistenceId() + "#" + e.event().sequenceNr())));
		return seen;
	}

	private List<String> allIds(CassandraJournal journal) {
		List<String> ids = new ArrayList<>();
		String after = null;
		while (true) {
			List<String> page = result(journal.persistenceIds(after, 500));
			ids.addAll(page);
			if (page.size() < 500) {
				return ids;
			}
			after = page.get(page.size() - 1);
		}
	}

	@ParameterizedTest
	@EnumSource(value = TagBucketing.class, names = { "NONE", "MINUTE" })
	void deleteEntityRemovesEveryRowOfItAndTheIdCanStartAgain(TagBucketing bucketing) {
		CassandraJournalOptions layout = this.options.withTagBucketing(bucketing).withPartitionSize(4)
			.withPersistenceIdBuckets(bucketing == TagBucketing.NONE ? 1 : 4);
		CassandraJournal journal = journal(session(), layout);
		CassandraReadJournal query = CassandraReadJournal.create(journal, session(), layout, new JacksonEventSerializer());
		CassandraSnapshotStore snapshots = CassandraSnapshotStore.create(session(), layout, new JacksonEventSerializer());
		CassandraDurableStateStore states = CassandraDurableStateStore.create(session(), layout,
				new JacksonEventSerializer());
		JournalCleanup cleanup = JournalCleanup.create(session(), journal);
		String tag = "gone-" + System.nanoTime();
		String id = newId();
		String other = newId();
		result(journal.append(id, 0, deposits(10, tag)));
		result(journal.append(other, 0, deposits(2, tag)));
		result(journal.deleteTo(id, 3));
		result(snapshots.save(id, 5, 15L));
		result(snapshots.save(id, 10, 55L));
		result(states.upsert(id, 1, "state of the id"));

		EntityDeletion deletion = result(cleanup.deleteEntity(id));

		assertThat(deletion).isEqualTo(new EntityDeletion(id, 10, true, 0));
		assertThat(replayed(journal, id)).isEmpty();
		assertThat(result(journal.highestSequenceNr(id))).isZero();
		assertThat(allIds(journal)).contains(other).doesNotContain(id);
		assertThat(byTag(query, tag)).containsExactly(other + "#1", other + "#2");
		assertThat(result(snapshots.loadLatest(id, Long.MAX_VALUE, Long.class))).isEmpty();
		assertThat(result(states.get(id, String.class))).isEmpty();
		assertThat(session().execute("SELECT * FROM " + layout.metadataTable() + "_deleted_to WHERE persistence_id = ?",
				id).all()).as("deletion marks").isEmpty();
		assertThat(replayed(journal, other)).containsExactly(1L, 2L);

		// The id starts again from 1, listed again, and its own deletions are not mistaken for the old ones.
		result(journal.append(id, 0, deposits(4, tag)));
		assertThat(allIds(journal)).contains(id);
		result(journal.deleteTo(id, 2));
		assertThat(replayed(journal, id)).containsExactly(3L, 4L);
		assertThat(result(journal.checkConsistency(id)).hasGap()).isFalse();

		// Idempotent: a second call on a removed id deletes nothing more of others.
		result(cleanup.deleteEntity(id));
		assertThat(result(cleanup.deleteEntity(id))).isEqualTo(new EntityDeletion(id, 0, true, 0));
		assertThat(replayed(journal, other)).containsExactly(1L, 2L);
	}

	@Test
	void anAppendBetweenTheEventsAndTheHeadLeavesTheEntityWithItsNewEventsAndSaysSo() {
		CassandraJournal writer = journal(session(), this.options);
		String id = newId();
		result(writer.append(id, 0, deposits(5, "race")));
		AtomicBoolean appended = new AtomicBoolean();
		CqlSession hooked = beforeConditionalHeadDelete(session(), () -> {
			if (appended.compareAndSet(false, true)) {
				result(writer.append(id, 5, deposits(2, "race")));
			}
		});
		JournalCleanup cleanup = JournalCleanup.create(hooked,
				journal(hooked, this.options));

		EntityDeletion deletion = result(cleanup.deleteEntity(id));

		assertThat(appended).isTrue();
		assertThat(deletion).isEqualTo(new EntityDeletion(id, 5, false, 7));
		assertThat(replayed(writer, id)).containsExactly(6L, 7L);
		assertThat(allIds(writer)).contains(id);
		assertThat(result(writer.highestSequenceNr(id))).isEqualTo(7);
		// The next call removes the rest.
		assertThat(result(JournalCleanup.create(session(), writer).deleteEntity(id)))
			.isEqualTo(new EntityDeletion(id, 7, true, 0));
		assertThat(replayed(writer, id)).isEmpty();
	}

	/** Runs {@code hook} (on another thread, waited for) just before the cleanup's conditional delete of the head is sent. */
	private static CqlSession beforeConditionalHeadDelete(CqlSession delegate, Runnable hook) {
		return (CqlSession) Proxy.newProxyInstance(JournalCleanupIT.class.getClassLoader(),
				new Class<?>[] { CqlSession.class }, (proxy, method, args) -> {
					if (method.getName().equals("executeAsync") && args != null && args.length == 1
							&& args[0] instanceof Statement<?> statement) {
						String cql = FaultInjectingSession.cql(statement);
						if (cql.startsWith("DELETE") && cql.contains("IF max_sequence_nr")) {
							// Off the driver's I/O thread (the hook blocks on an append).
							return java.util.concurrent.CompletableFuture.runAsync(hook)
								.thenCompose((ignored) -> delegate.executeAsync(statement));
						}
					}
					try {
						return method.invoke(delegate, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
	}

	@Test
	void deleteBeforeSnapshotKeepsKSnapshotsAndTheEventsAfterTheOldestKept() {
		CassandraJournal journal = journal(session(), this.options.withPartitionSize(7));
		CassandraSnapshotStore snapshots = CassandraSnapshotStore.create(session(), this.options,
				new JacksonEventSerializer());
		JournalCleanup cleanup = JournalCleanup.create(session(), journal);
		String id = newId();
		result(journal.append(id, 0, deposits(35, "cut")));
		for (long at : new long[] { 10, 20, 30 }) {
			result(snapshots.save(id, at, at));
		}

		SnapshotCut planned = result(cleanup.planSnapshotCut(id, 2));
		assertThat(planned).isEqualTo(new SnapshotCut(id, 20, 0, 1, 2));
		assertThat(planned.events()).isEqualTo(20);
		assertThat(replayed(journal, id)).as("a plan deletes nothing").hasSize(35);

		assertThat(result(cleanup.deleteBeforeSnapshot(id, 2))).isEqualTo(planned);

		assertThat(replayed(journal, id)).first().isEqualTo(21L);
		assertThat(replayed(journal, id)).hasSize(15);
		assertThat(result(snapshots.loadLatest(id, 19, Long.class))).isEmpty();
		assertThat(result(snapshots.loadLatest(id, 29, Long.class))).hasValueSatisfying(
				(s) -> assertThat(s.sequenceNr()).isEqualTo(20));
		assertThat(result(journal.checkConsistency(id)).hasGap()).isFalse();
		SnapshotCut again = result(cleanup.planSnapshotCut(id, 2));
		assertThat(again).isEqualTo(new SnapshotCut(id, 20, 20, 0, 2));
		assertThat(again.deletesSomething()).isFalse();
		String unknown = newId();
		assertThat(result(cleanup.planSnapshotCut(unknown, 1))).isEqualTo(new SnapshotCut(unknown, 0, 0, 0, 0));
	}

	@Test
	void dropTagBucketsDeletesWholeOldBucketsAndTheirListEntries() {
		SettableClock clock = new SettableClock(Instant.parse("2026-01-01T10:00:10Z"));
		CassandraJournalOptions layout = this.options.withTagBucketing(TagBucketing.MINUTE).withClock(clock);
		CassandraJournal journal = journal(session(), layout);
		CassandraReadJournal query = CassandraReadJournal.create(journal, session(), layout, new JacksonEventSerializer());
		JournalCleanup cleanup = JournalCleanup.create(session(), journal);
		String tag = "buckets-" + System.nanoTime();
		String id = newId();
		result(journal.append(id, 0, deposits(2, tag)));
		clock.advance(Duration.ofMinutes(1));
		result(journal.append(id, 2, deposits(2, tag)));
		clock.advance(Duration.ofMinutes(1));
		result(journal.append(id, 4, deposits(2, tag)));

		// 10:01:30 lies inside the second bucket: only the first ends before it.
		List<TagBucket> planned = result(cleanup.planTagBuckets(Instant.parse("2026-01-01T10:01:30Z")));
		assertThat(planned).filteredOn((b) -> b.tag().equals(tag))
			.containsExactly(new TagBucket(tag, Instant.parse("2026-01-01T10:00:00Z")));
		assertThat(byTag(query, tag)).hasSize(6);

		List<TagBucket> dropped = result(cleanup.dropTagBucketsBefore(Instant.parse("2026-01-01T10:02:00Z")));

		assertThat(dropped).filteredOn((b) -> b.tag().equals(tag)).containsExactly(
				new TagBucket(tag, Instant.parse("2026-01-01T10:00:00Z")),
				new TagBucket(tag, Instant.parse("2026-01-01T10:01:00Z")));
		assertThat(byTag(query, tag)).containsExactly(id + "#5", id + "#6");
		assertThat(session().execute("SELECT bucket FROM " + layout.tagBucketsTable() + " WHERE tag = ? AND bucket >= 0",
				tag).all())
			.extracting((row) -> Instant.ofEpochMilli(row.getLong(0)))
			.containsExactly(Instant.parse("2026-01-01T10:02:00Z"));
		// How far the drop reached, as a negative row below the buckets (finding 19): what a tag projection reports.
		assertThat(session().execute("SELECT bucket FROM " + layout.tagBucketsTable() + " WHERE tag = ? AND bucket < 0",
				tag).all())
			.extracting((row) -> row.getLong(0))
			.containsExactly(-Instant.parse("2026-01-01T10:02:00Z").toEpochMilli());
		assertThat(result(query.tagDroppedBefore(tag))).contains(Instant.parse("2026-01-01T10:02:00Z"));
		assertThat(replayed(journal, id)).as("events stay in the journal").hasSize(6);
		assertThat(result(cleanup.planTagBuckets(Instant.parse("2026-01-01T10:02:00Z"))))
			.filteredOn((b) -> b.tag().equals(tag)).isEmpty();
	}

}
