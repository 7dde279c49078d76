package io.cassandrajournal.journal;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.BatchStatement;
import com.datastax.oss.driver.api.core.cql.BatchStatementBuilder;
import com.datastax.oss.driver.api.core.cql.BatchType;
import com.datastax.oss.driver.api.core.cql.BoundStatement;
import com.datastax.oss.driver.api.core.cql.ResultSet;
import com.datastax.oss.driver.api.core.cql.SimpleStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import com.datastax.oss.driver.api.core.servererrors.InvalidQueryException;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.TagPartitions;
import io.cassandrajournal.internal.TagPartitions.TagRow;
import io.cassandrajournal.internal.TagSlices;
import io.cassandrajournal.serialization.JacksonEventSerializer;
import io.cassandrajournal.testsupport.CassandraTest;
import io.cassandrajournal.testsupport.TestKeyspace;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The tag rows of a large append with the segment-aware index ({@code tag-slice-groups}) on a real node: their
 * logged batches are estimated as the node counts them, so none is refused as too large and no row's copies are
 * written separately (review of S2: the estimate undercounted tag rows by 15 to 27 bytes a copy, so batches cut at
 * 48 KiB went over the node's 50 KiB and fell back to separate copies, the hole S2 closed).
 */
@CassandraTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TagCopyBatchIT {

	private static final int GROUPS = 16;

	/** Cassandra's client warning for a batch over batch_size_warn_threshold (5 KiB by default), in bytes. */
	private static final Pattern BATCH_SIZE = Pattern.compile("is of size ([0-9]+),");

	private TestKeyspace keyspace;

	private CassandraJournalOptions options;

	/** A serialized payload. */
	public record Memo(String text) {
	}

	/** What {@link JournalMetrics#tagCopiesBatchRefused} was told. */
	record Refusal(int rows, boolean separateCopies) {
	}

	@BeforeAll
	void create(TestKeyspace keyspace) {
		this.keyspace = keyspace;
		this.options = CassandraJournalOptions.create()
			.withKeyspace(keyspace.name())
			.withUseTagIndex(true)
			.withTagSliceGroups(GROUPS);
		// The tables.
		CassandraJournal.create(keyspace.session(), this.options, new JacksonEventSerializer());
	}

	/**
	 * One append of {@code events} events under one tag, too large for one logged batch with its events, so written
	 * events first and then its tag rows in logged batches of both copies.
	 */
	@ParameterizedTest
	@CsvSource({ "orders, 200, 300, 0", "orderz, 400, 100, 0", "orderq, 200, 300, 86400" })
	void aLargeAppendsTagRowsAreNeverRefusedAsTooLarge(String tag, int events, int payloadBytes, int ttlSeconds) {
		List<Refusal> refusals = new CopyOnWriteArrayList<>();
		JournalMetrics metrics = new JournalMetrics() {
			@Override
			public void tagCopiesBatchRefused(int rows, boolean separateCopies) {
				refusals.add(new Refusal(rows, separateCopies));
			}
		};
		CassandraJournalOptions options = this.options.withTagIndexTtl(Duration.ofSeconds(ttlSeconds));
		CassandraJournal journal = CassandraJournal.create(this.keyspace.session(), options, new JacksonEventSerializer(),
				metrics);
		// A short tag, as most are: the old estimate counted the tag's length twice, which hid its undercount.
		String id = "order-" + System.nanoTime();
		List<EventToAppend> append = new ArrayList<>();
		for (int i = 0; i < events; i++) {
			append.add(EventToAppend.of(new Memo("m".repeat(payloadBytes)), tag));
		}

		result(journal.append(id, 0, append));

		assertThat(refusals).as("logged batches of tag row copies refused as too large").isEmpty();
		assertThat(count("SELECT count(*) FROM " + this.keyspace.name() + "." + options.tagIndexTable()
				+ " WHERE tag = ? AND persistence_id = ? ALLOW FILTERING", tag, id)).isEqualTo(events);
		assertThat(count("SELECT count(*) FROM " + this.keyspace.name() + "." + options.tagIndexSlicedTable()
				+ " WHERE tag = ? AND slice_group = ? AND persistence_id = ? ALLOW FILTERING", tag,
				TagSlices.groupOf(this.options.sliceHash(), id, GROUPS), id)).isEqualTo(events);
	}

	/** The estimate against the size the node itself reports (its warning above 5 KiB) for logged batches. */
	@ParameterizedTest
	@CsvSource({ "10, 300, 1, 0", "55, 300, 1, 0", "15, 1000, 3, 0", "20, 300, 1, 86400", "1, 3000, 2, 0" })
	void theEstimateOfTagCopiesIsTheSizeTheNodeReports(int count, int payloadBytes, int tags, int ttlSeconds) {
		TagPartitions index = TagPartitions.create(this.keyspace.session(),
				this.options.withTagIndexTtl(Duration.ofSeconds(ttlSeconds)));
		Set<String> all = new LinkedHashSet<>();
		String tag = "sized-" + System.nanoTime();
		for (int t = 0; t < tags; t++) {
			all.add((t == 0) ? tag : tag + "-\u00e9t\u00e9-" + t);
		}
		List<TagRow> rows = new ArrayList<>();
		for (int i = 1; i <= count; i++) {
			rows.add(new TagRow(tag, 1_000L, "entity-" + tag, i, "p".repeat(payloadBytes), all));
		}
		List<BoundStatement> inserts = result(index.inserts(rows));

		ResultSet written = this.keyspace.session()
			.execute(BatchStatement.newInstance(BatchType.LOGGED).addAll(inserts));

		long reported = reportedSize(written.getExecutionInfo().getWarnings());
		assertThat(BatchBytes.tagRows(rows, index.copies(), ttlSeconds > 0)).isEqualTo(reported);
	}

	/**
	 * The estimate that decides the single atomic batch (events, head and every tag row copy) against the size the
	 * node reports for that batch, built as {@link AppendWriter} builds it.
	 */
	@ParameterizedTest
	@CsvSource({ "5, 300, 1, true", "15, 200, 2, true", "12, 1000, 0, true", "10, 300, 1, false" })
	void theEstimateOfAnAtomicBatchIsTheSizeTheNodeReports(int count, int payloadBytes, int tags, boolean head) {
		JournalStatements statements = new JournalStatements(this.keyspace.session(), this.options);
		TagPartitions index = TagPartitions.create(this.keyspace.session(), this.options);
		String id = "atomic-" + System.nanoTime();
		Set<String> all = new LinkedHashSet<>();
		for (int t = 0; t < tags; t++) {
			all.add("t" + t + "-\u00e9");
		}
		List<String> payloads = new ArrayList<>();
		List<Set<String>> tagSets = new ArrayList<>();
		List<TagRow> tagRows = new ArrayList<>();
		BatchStatementBuilder batch = BatchStatement.builder(BatchType.LOGGED);
		for (int i = 1; i <= count; i++) {
			String payload = "{\"text\":\"" + "\u00e9".repeat(payloadBytes / 2) + "\"}";
			payloads.add(payload);
			tagSets.add(all);
			batch.addStatement(statements.insertEvent.bind(id, 0L, (long) i, 1_000L, payload, all));
			for (String tag : all) {
				tagRows.add(new TagRow(tag, 1_000L, id, i, payload, all));
			}
		}
		if (head) {
			batch.addStatement(statements.setHead.bind((long) count, 1_000L, id));
		}
		result(index.inserts(tagRows)).forEach(batch::addStatement);

		ResultSet written = this.keyspace.session().execute(batch.build());

		long reported = reportedSize(written.getExecutionInfo().getWarnings());
		assertThat(BatchBytes.events(payloads, tagSets, 1, head) + BatchBytes.tagRows(tagRows, index.copies(), false))
			.isEqualTo(reported);
	}

	/**
	 * A node with a lower {@code batch_size_fail_threshold} (here: a session refusing every logged batch of more
	 * than one row's copies as the node does): the batch is split in halves down to single rows, each row's copies
	 * still in one logged batch, and nothing is written as separate copies.
	 */
	@Test
	void aBatchRefusedAsTooLargeIsSplitInHalvesKeepingEachRowsCopiesTogether() {
		CqlSession real = this.keyspace.session();
		List<Integer> sent = new CopyOnWriteArrayList<>();
		CqlSession refusing = (CqlSession) Proxy.newProxyInstance(getClass().getClassLoader(),
				new Class<?>[] { CqlSession.class }, (proxy, method, args) -> {
					if (method.getName().equals("executeAsync") && args.length == 1
							&& args[0] instanceof BatchStatement batch && batch.getBatchType() == BatchType.LOGGED) {
						sent.add(batch.size());
						if (batch.size() > 2) {
							return CompletableFuture.failedFuture(new InvalidQueryException(null, "Batch too large"));
						}
					}
					try {
						return method.invoke(real, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getCause();
					}
				});
		List<Refusal> refusals = new CopyOnWriteArrayList<>();
		JournalMetrics metrics = new JournalMetrics() {
			@Override
			public void tagCopiesBatchRefused(int rows, boolean separateCopies) {
				refusals.add(new Refusal(rows, separateCopies));
			}
		};
		TagPartitions index = TagPartitions.create(real, this.options);
		TagCopyWrites copies = new TagCopyWrites(refusing, index, metrics, false);
		String tag = "split-" + System.nanoTime();
		String id = "entity-" + tag;
		List<TagRow> rows = new ArrayList<>();
		for (int i = 1; i <= 8; i++) {
			rows.add(new TagRow(tag, 1_000L, id, i, "p", Set.of(tag)));
		}
		RowWrites writes = new RowWrites();
		copies.add(writes, rows, Statement.NO_DEFAULT_TIMESTAMP, BatchStatementBuilder::build);

		assertThat(result(writes.run()).failure()).isNull();

		assertThat(refusals).as("8 rows: halves of 8, of 4 (twice), of 2 (four times)")
			.containsExactlyInAnyOrder(new Refusal(8, false), new Refusal(4, false), new Refusal(4, false),
					new Refusal(2, false), new Refusal(2, false), new Refusal(2, false), new Refusal(2, false));
		assertThat(sent).filteredOn((size) -> size == 2).as("one logged batch per row, its two copies").hasSize(8);
		assertThat(count("SELECT count(*) FROM " + this.keyspace.name() + "." + this.options.tagIndexTable()
				+ " WHERE tag = ?", tag)).isEqualTo(8);
		assertThat(count("SELECT count(*) FROM " + this.keyspace.name() + "." + this.options.tagIndexSlicedTable()
				+ " WHERE tag = ? AND slice_group = ?", tag, TagSlices.groupOf(this.options.sliceHash(), id, GROUPS))).isEqualTo(8);
	}

	private static long reportedSize(List<String> warnings) {
		for (String warning : warnings) {
			Matcher size = BATCH_SIZE.matcher(warning);
			if (size.find()) {
				return Long.parseLong(size.group(1));
			}
		}
		throw new AssertionError("no batch size warning in " + warnings);
	}

	private long count(String cql, Object... values) {
		return this.keyspace.session().execute(SimpleStatement.newInstance(cql, values)).one().getLong(0);
	}

}
