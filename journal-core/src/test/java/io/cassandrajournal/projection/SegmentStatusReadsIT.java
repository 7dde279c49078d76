package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.List;

import com.datastax.oss.driver.api.core.CqlSession;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.state.CassandraDurableStateStore;
import io.cassandrajournal.testing.AccountEvent;
import io.cassandrajournal.testing.CountingSession;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * What a status read of a shared projection of 16 segments costs on a real node, counted in requests: a health
 * read ({@link ProjectionEngine#readSegmentOwners}) reads the lease rows in one query, and none while the
 * projection's lease loop runs on the reading instance; the endpoint's read ({@link ProjectionEngine#readSegments})
 * adds each segment's stored cursor and lag count for the segments run elsewhere. Another instance owns the
 * segments. Lease timeout 3 s, renewal 1 s; waits bounded by 30 s.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SegmentStatusReadsIT {

	private static final int SEGMENTS = 16;

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	private CountingSession counting;

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		this.counting = new CountingSession(keyspace.session());
	}

	/** An engine whose every request (leases, cursors, journal reads) goes through the given session. */
	private ProjectionEngine engine(String instance, CqlSession session) {
		JacksonEventSerializer serializer = new JacksonEventSerializer();
		CassandraJournal journal = CassandraJournal.create(session, this.options, serializer);
		return ProjectionEngine.builder(journal)
			.readJournal(CassandraReadJournal.create(journal, session, this.options, serializer))
			.offsetStore(new DurableStateOffsetStore(CassandraDurableStateStore.create(session, this.options,
					new JacksonEventSerializer())))
			.sharing(ProjectionSharing.create(session, this.options).withInstanceId(instance)
				.withLeaseTiming(Duration.ofSeconds(3), Duration.ofSeconds(1)))
			.build();
	}

	private static void register(ProjectionEngine engine, String name) {
		engine.register(Projection.byTag(name, TagFilter.tag(name), AccountEvent.class, EventHandler.blocking((event) -> {
		}), ProjectionSettings.defaults().withSegments(SEGMENTS)));
	}

	@Test
	void aHealthReadCostsOneQueryAndNoneWhileTheLeaseLoopRunsHere() {
		String name = "reads-" + System.nanoTime();
		try (ProjectionEngine owner = engine("owner", this.keyspace.session());
				ProjectionEngine observer = engine("observer", this.counting.session())) {
			register(owner, name);
			register(observer, name);
			result(owner.startAll());
			// Bound: a lone instance takes every free segment on its first rounds.
			await("the owner runs every segment").atMost(Duration.ofSeconds(30))
				.until(() -> owner.segments(name).stream().allMatch(SegmentStatus::runsHere));

			// The observer has not started the projection: its reads are its own.
			this.counting.takeCount();
			List<SegmentStatus> owners = result(observer.readSegmentOwners(name));
			int ownersCost = this.counting.takeCount();
			assertThat(owners).hasSize(SEGMENTS).allSatisfy((segment) -> {
				assertThat(segment.owner()).isEqualTo("owner");
				assertThat(segment.runsHere()).isFalse();
				assertThat(segment.cursor()).isNull();
				assertThat(segment.ownerlessFor()).isNull();
			});
			assertThat(ownersCost).as("requests of a health read").isEqualTo(1);

			List<SegmentStatus> full = result(observer.readSegments(name));
			int fullCost = this.counting.takeCount();
			assertThat(full).hasSize(SEGMENTS).allSatisfy((segment) -> {
				assertThat(segment.owner()).isEqualTo("owner");
				assertThat(segment.epoch()).isPositive();
				assertThat(segment.cursor()).as("fenced at the take, so stored").isNotNull();
				assertThat(segment.lagEvents()).isZero();
			});
			assertThat(fullCost).as("requests of a full read: the rows, then a cursor and a lag count per segment")
				.isGreaterThanOrEqualTo(1 + 2 * SEGMENTS);

			result(observer.startAll());
			Thread caller = Thread.currentThread();
			// Bound: the observer's lease loop reads the rows on its first round, then every renewal interval.
			await("a health read answered from the lease loop's rows").atMost(Duration.ofSeconds(30)).until(() -> {
				this.counting.watch(caller);
				result(observer.readSegmentOwners(name));
				return this.counting.requestsByWatchedThread() == 0;
			});
			for (int i = 0; i < 5; i++) {
				this.counting.watch(caller);
				assertThat(result(observer.readSegmentOwners(name))).hasSize(SEGMENTS);
				assertThat(this.counting.requestsByWatchedThread()).as("requests of a health read, loop running")
					.isZero();
			}
			System.out.printf("Status reads of %d segments owned elsewhere: health read %d request(s) (0 while the "
					+ "lease loop runs here), full read %d requests%n", SEGMENTS, ownersCost, fullCost);
		}
	}

}
