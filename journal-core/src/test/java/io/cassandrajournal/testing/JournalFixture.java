package io.cassandrajournal.testing;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import com.datastax.oss.driver.api.core.CqlSession;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.journal.CassandraJournal;
import io.cassandrajournal.journal.EventToAppend;
import io.cassandrajournal.journal.Journal;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testing.AccountEvent.Deposited;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;

/**
 * The per-class set-up the tests of the journal's write, delete and seal paths on a real node share (DeleteToIT,
 * JournalCleanupIT, LateBatchSealIT, ReleaseRuleIT, LateTagRowsIT): the test keyspace with the tag index on, the
 * journal's tables created once, journals on it, new entity ids, deposits, and the options under which a failed
 * append releases its claim. The scenarios themselves are in {@link LateBatches}.
 */
public final class JournalFixture {

	private final TestKeyspace keyspace;

	private final CassandraJournalOptions options;

	/**
	 * Creates the journal's tables (the tag index on) in the test class's keyspace.
	 * @param keyspace the test class's keyspace
	 */
	public JournalFixture(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create().withKeyspace(keyspace.name()).withUseTagIndex(true);
		journal(session(), this.options);
	}

	/** @return the keyspace's session */
	public CqlSession session() {
		return this.keyspace.session();
	}

	/** @return the keyspace's name */
	public String keyspaceName() {
		return this.keyspace.name();
	}

	/** @return the journal's options on this keyspace: the defaults with the tag index on */
	public CassandraJournalOptions options() {
		return this.options;
	}

	/** @return a journal on {@code session} with {@code options}, serializing with Jackson */
	public static CassandraJournal journal(CqlSession session, CassandraJournalOptions options) {
		return CassandraJournal.create(session, options, new JacksonEventSerializer());
	}

	/** @return a persistenceId no other test uses */
	public static String newId() {
		return "account-" + UUID.randomUUID();
	}

	/** @return deposits of 1..{@code count}, each with {@code tags} */
	public static List<EventToAppend> deposits(int count, String... tags) {
		List<EventToAppend> events = new ArrayList<>();
		for (int i = 1; i <= count; i++) {
			events.add(EventToAppend.of(new Deposited(i), tags));
		}
		return events;
	}

	/** @return the sequence numbers a plain replay of the whole entity delivers */
	public static List<Long> replayed(Journal journal, String id) {
		List<Long> seen = new ArrayList<>();
		result(journal.replay(id, 1, Long.MAX_VALUE, AccountEvent.class, (e) -> seen.add(e.sequenceNr())));
		return seen;
	}

	/**
	 * Options under which a failed append releases its claim when it fails soon after it: a release is sent only
	 * while now plus {@code request-timeout} plus {@code claim-settle-time} is before the writer's deadline
	 * ({@code in-flight-wait} less a margin; docs/reliability.md, finding 15 item 5 and finding 21 item 6). A 1 s
	 * request timeout and a 1 s settle time (the default 6 s covers Paxos v1; the launcher's node runs v2, bounded by
	 * 2 s): an append failing up to about 2 s before its deadline still releases its claim.
	 * @param options the options to change
	 * @param inFlightWait the wait, well above 2 s
	 * @return the options
	 */
	public static CassandraJournalOptions releasing(CassandraJournalOptions options, Duration inFlightWait) {
		return options.withInFlightWait(inFlightWait)
			.withRequestTimeout(Duration.ofSeconds(1))
			.withClaimSettleTime(Duration.ofSeconds(1));
	}

}
