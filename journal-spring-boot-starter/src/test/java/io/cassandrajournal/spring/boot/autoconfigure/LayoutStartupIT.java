package io.cassandrajournal.spring.boot.autoconfigure;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.cassandra.autoconfigure.CassandraAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.SliceHash;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.query.CassandraReadJournal;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;
import io.cassandrajournal.testsupport.TestSessions;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The starter's start-up against the keyspace's layout record (docs/reliability.md, finding 26; engineer L): two
 * instances starting on a new keyspace, one leaving {@code slice-hash} unset while the other records
 * {@code string-hash} during its start; and how often a start reads the record. Each test has its own events table,
 * so its own record.
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class LayoutStartupIT {

	/** An id whose slices differ between the two functions. */
	private static final String ID = "account-7";

	private ApplicationContextRunner runner;

	private TestKeyspace keyspace;

	@BeforeAll
	void runner(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		InetSocketAddress point = keyspace.contactPoints().get(0);
		this.runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(CassandraAutoConfiguration.class,
					CassandraJournalAutoConfiguration.class, JournalProjectionsAutoConfiguration.class))
			.withPropertyValues("spring.cassandra.contact-points=" + point.getHostString() + ":" + point.getPort(),
					"spring.cassandra.local-datacenter=" + keyspace.datacenter(),
					"journal.cassandra.keyspace=" + keyspace.name(), "journal.cassandra.use-tag-index=true",
					"journal.cassandra.tag-slice-groups=16");
	}

	/**
	 * The race of finding 26 (slice-hash adoption, high): instance A leaves {@code slice-hash} unset on a new
	 * keyspace; instance B, configured with {@code string-hash}, starts and records it after A began its start but
	 * before A reached the record (B's whole start runs inside A's first request that names the record's table).
	 * A must run its journal and its read journal with the recorded {@code string-hash}. On the starter before the
	 * lead's fix ({@code 6ffc027}) A's journal kept the {@code murmur3} its factory had taken while no record
	 * existed: sliced tag copies in other groups than the read journal's segments read.
	 */
	@Test
	void anInstanceLeavingSliceHashUnsetRunsWithTheFunctionAnotherInstanceRecordedDuringItsStart() {
		String events = "race_events";
		AtomicBoolean bStarted = new AtomicBoolean();
		Runnable startB = () -> this.runner
			.withPropertyValues("journal.cassandra.events-table=" + events, "journal.cassandra.slice-hash=string-hash")
			.run((context) -> {
				assertThat(context).as("B's start").hasNotFailed();
				assertThat(context.getBean(CassandraJournal.class).options().sliceHash()).isEqualTo(SliceHash.STRING_HASH);
				bStarted.set(true);
			});
		WatchedSession a = new WatchedSession(open(), events + "_layout", startB);
		this.runner.withPropertyValues("journal.cassandra.events-table=" + events)
			.withBean(CqlSession.class, a::session)
			.run((context) -> {
				assertThat(context).as("A's start").hasNotFailed();
				assertThat(bStarted).as("B started inside A's start").isTrue();
				assertThat(settings(events)).containsEntry("slice-hash", "STRING_HASH");
				assertThat(context.getBean(CassandraJournal.class).options().sliceHash()).as("A's journal")
					.isEqualTo(SliceHash.STRING_HASH);
				assertThat(context.getBean(CassandraReadJournal.class).sliceOf(ID)).as("A's read journal")
					.isEqualTo(SliceHash.STRING_HASH.slice(ID));
			});
	}

	/**
	 * Engineer L2, 2026-12-02 (review of finding 27, item 6): the race above fires on A's first request naming the
	 * record's table, which is the column check of its table ({@code system_schema.columns}), so A then reads B's
	 * record. Here B's start runs inside A's {@code INSERT ... IF NOT EXISTS}, after A read no record: A's insert is
	 * not applied, and A must adopt the row the lightweight transaction returns. (A coverage test: it passes on the
	 * code it was written against; the adoption path had no test.)
	 */
	@Test
	void anInstanceWhoseFirstRecordingLosesAdoptsTheRowItsInsertReturns() {
		String events = "race_insert_events";
		AtomicBoolean bStarted = new AtomicBoolean();
		Runnable startB = () -> this.runner
			.withPropertyValues("journal.cassandra.events-table=" + events, "journal.cassandra.slice-hash=string-hash")
			.run((context) -> {
				assertThat(context).as("B's start").hasNotFailed();
				bStarted.set(true);
			});
		WatchedSession a = new WatchedSession(open(),
				(query) -> query.startsWith("INSERT INTO ") && query.contains("." + events + "_layout "), startB);
		this.runner.withPropertyValues("journal.cassandra.events-table=" + events)
			.withBean(CqlSession.class, a::session)
			.run((context) -> {
				assertThat(context).as("A's start").hasNotFailed();
				assertThat(bStarted).as("B started inside A's insert").isTrue();
				assertThat(a.queries).as("A read no record before its insert")
					.filteredOn((q) -> q.startsWith("SELECT settings FROM ") && q.contains("." + events + "_layout "))
					.hasSize(1);
				assertThat(settings(events)).containsEntry("slice-hash", "STRING_HASH");
				assertThat(context.getBean(CassandraJournal.class).options().sliceHash()).as("A's journal")
					.isEqualTo(SliceHash.STRING_HASH);
				assertThat(context.getBean(CassandraReadJournal.class).sliceOf(ID)).as("A's read journal")
					.isEqualTo(SliceHash.STRING_HASH.slice(ID));
			});
	}

	/**
	 * Engineer L2, 2026-12-02 (review of finding 27, item 5): an application's own {@link CassandraJournal} bean is
	 * not built by the starter, so nothing verified its slice function against the record, and the read journal took
	 * that function from it. Built with {@code murmur3} on a {@code string-hash} keyspace, its read journal's
	 * segments followed murmur3 too (the start succeeded). The starter now verifies the layout for the read journal
	 * and refuses a journal whose function differs from the recorded one, saying what to set; a journal that adopted
	 * the recorded function starts, with a read journal on it.
	 */
	@Test
	void anApplicationsJournalWithAnotherFunctionThanTheRecordedOneIsRefused() {
		String events = "own_journal_events";
		ApplicationContextRunner start = this.runner.withPropertyValues("journal.cassandra.events-table=" + events);
		start.withPropertyValues("journal.cassandra.slice-hash=string-hash")
			.run((context) -> assertThat(context).as("the first start, recording string-hash").hasNotFailed());
		CassandraJournalOptions own = CassandraJournalOptions.create()
			.withKeyspace(this.keyspace.name())
			.withEventsTable(events)
			.withUseTagIndex(true)
			.withTagSliceGroups(16);

		start.withBean(CassandraJournal.class, () -> CassandraJournal.create(this.keyspace.session(),
				own.withSliceHash(SliceHash.MURMUR3), new JacksonEventSerializer()))
			.run((context) -> {
				assertThat(context).as("a journal bean with murmur3").hasFailed();
				assertThat(context.getStartupFailure()).rootCause()
					.hasMessageContaining("MURMUR3")
					.hasMessageContaining("STRING_HASH")
					.hasMessageContaining("verifyLayout")
					.hasMessageContaining("journal.cassandra.slice-hash");
			});
		start.withBean(CassandraJournal.class,
				() -> CassandraJournal.create(this.keyspace.session(), own, new JacksonEventSerializer()))
			.run((context) -> {
				assertThat(context).as("a journal bean that adopted the recorded function").hasNotFailed();
				assertThat(context.getBean(CassandraReadJournal.class).sliceOf(ID))
					.isEqualTo(SliceHash.STRING_HASH.slice(ID));
			});
	}

	/**
	 * A start on a recorded keyspace with {@code slice-hash} unset reads the record once ({@code verifyLayout}) and
	 * does not look its table up in {@code system_schema.tables}. Before (journal, then {@code verifyLayout}, then
	 * the read journal, the factories each adopting the function): 2 look-ups and 3 reads with the factories of
	 * {@code 6ffc027} (as {@code LayoutStartupReadsIT} counts them for the core), 0 and 3 measured on the code before
	 * it (the factories then asked the driver's schema metadata and read the record without Paxos).
	 */
	@Test
	void aStartReadsTheLayoutRecordOnce() {
		String events = "once_events";
		ApplicationContextRunner start = this.runner.withPropertyValues("journal.cassandra.events-table=" + events);
		start.run((context) -> assertThat(context).as("the first start, recording").hasNotFailed());
		WatchedSession counted = new WatchedSession(open(), events + "_layout", () -> {
		});
		start.withBean(CqlSession.class, counted::session).run((context) -> {
			assertThat(context).as("the second start").hasNotFailed();
			assertThat(context.getBean(CassandraJournal.class).options().sliceHash()).isEqualTo(SliceHash.MURMUR3);
		});
		List<String> queries = List.copyOf(counted.queries);
		long lookups = queries.stream()
			.filter((q) -> q.contains("system_schema.tables") && q.contains(events + "_layout"))
			.count();
		long recordReads = queries.stream()
			.filter((q) -> q.contains("SELECT settings FROM ") && q.contains("." + events + "_layout "))
			.count();
		assertThat(new long[] { lookups, recordReads }).as("look-ups of the record's table, reads of the record")
			.containsExactly(0, 1);
	}

	private CqlSession open() {
		return TestSessions.open(this.keyspace.contactPoints(), this.keyspace.datacenter(), this.keyspace.name());
	}

	private java.util.Map<String, String> settings(String events) {
		return this.keyspace.session()
			.execute("SELECT settings FROM " + this.keyspace.name() + "." + events + "_layout WHERE id = 'layout'")
			.one()
			.getMap("settings", String.class, String.class);
	}

	/**
	 * A real session that notes every request's text (with a simple statement's values) and runs {@code onFirst}
	 * before sending the first request that names {@code watched} in its text or values (or, with a predicate, the
	 * first whose text it accepts).
	 */
	static final class WatchedSession {

		private final CqlSession delegate;

		private final Predicate<String> watched;

		private final Runnable onFirst;

		private final AtomicBoolean fired = new AtomicBoolean();

		final Queue<String> queries = new ConcurrentLinkedQueue<>();

		WatchedSession(CqlSession delegate, String watched, Runnable onFirst) {
			this(delegate, (query) -> query.contains(watched), onFirst);
		}

		WatchedSession(CqlSession delegate, Predicate<String> watched, Runnable onFirst) {
			this.delegate = delegate;
			this.watched = watched;
			this.onFirst = onFirst;
		}

		CqlSession session() {
			return (CqlSession) Proxy.newProxyInstance(CqlSession.class.getClassLoader(),
					new Class<?>[] { CqlSession.class }, (proxy, method, args) -> {
						if (method.getName().startsWith("execute") && args != null && args.length > 0) {
							String query = describe(args[0]);
							this.queries.add(query);
							if (this.watched.test(query) && this.fired.compareAndSet(false, true)) {
								this.onFirst.run();
							}
						}
						try {
							return method.invoke(this.delegate, args);
						}
						catch (InvocationTargetException ex) {
							throw ex.getCause();
						}
					});
		}

		private static String describe(Object request) {
			if (request instanceof SimpleStatement simple) {
				return simple.getQuery() + " | " + simple.getPositionalValues();
			}
			if (request instanceof BoundStatement bound) {
				return bound.getPreparedStatement().getQuery();
			}
			return String.valueOf(request);
		}

	}

}
