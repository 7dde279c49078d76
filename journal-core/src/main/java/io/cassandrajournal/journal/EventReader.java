package io.cassandrajournal.journal;

import java.time.Instant;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.AsyncResultSet;
import com.datastax.oss.driver.api.core.cql.Row;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.RawEvents;
import io.cassandrajournal.internal.RowValues;
import io.cassandrajournal.serialization.EventSerializer;

/**
 * The read path of {@link io.cassandrajournal.journal.CassandraJournal}: the head from the metadata row,
 * then one partition after another, page by page, in sequence order.
 */
final class EventReader {

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final JournalStatements statements;

	private final EventSerializer serializer;

	public EventReader(CqlSession session, CassandraJournalOptions options, JournalStatements statements,
			EventSerializer serializer) {
		this.session = session;
		this.options = options;
		this.statements = statements;
		this.serializer = serializer;
	}

	/**
	 * The head and when it was claimed.
	 *
	 * @param sequenceNr the highest claimed sequence number, 0 if none
	 * @param claimedAt the claim's {@code updated_at} (epoch millis of the claiming writer's clock);
	 * {@code Long.MAX_VALUE} when the row has none, so that the claim counts as recent
	 */
	public record Head(long sequenceNr, long claimedAt) {
	}

	public CompletionStage<Head> headWithClaimTime(String persistenceId) {
		return this.session.executeAsync(this.statements.selectHead.bind(persistenceId)).thenApply(EventReader::head);
	}

	/**
	 * The head read at the serial consistency level: completes a Paxos round on the row that a quorum accepted and
	 * whose commit has not happened yet (a claim release whose commit timed out, docs/reliability.md, finding 21
	 * item 1), so what it shows no pending round can change.
	 * @param persistenceId the entity
	 * @return the head and its claim time
	 */
	public CompletionStage<Head> serialHeadWithClaimTime(String persistenceId) {
		return this.session.executeAsync(this.statements.selectHeadSerial.bind(persistenceId))
			.thenApply(EventReader::head);
	}

	/**
	 * @return whether claims are lightweight transactions: only then can a release be accepted with its commit
	 * pending, and only then does a hole at the end need a {@linkplain #serialHeadWithClaimTime serial read}
	 */
	public boolean claimsArePaxosRounds() {
		return this.options.lightweightTransactions();
	}

	/**
	 * The time stamp of the first visible event above {@code after}, up to {@code head}'s partition: its claim came
	 * after the claim of every number up to {@code after} (claims move the head in order), and those numbers can no
	 * longer be released (a release is conditional on the head being the claim's last number, and a claim with a
	 * visible event is never released). So it bounds a hole at the end of a range below a head that moved on, as the
	 * next visible event bounds a hole in the middle; the head's own claim time does not (a busy writer keeps
	 * renewing it).
	 * @param persistenceId the entity
	 * @param after the end of the range
	 * @param head the head read (above {@code after})
	 * @return the time stamp, or {@code Long.MAX_VALUE} when no event above {@code after} is visible
	 */
	public CompletionStage<Long> firstStampAbove(String persistenceId, long after, long head) {
		return firstStampAbove(persistenceId, after, partitionOf(after + 1), partitionOf(Math.max(head, after + 1)));
	}

	private CompletionStage<Long> firstStampAbove(String persistenceId, long after, long partition, long last) {
		return this.session.executeAsync(this.statements.selectFirstAbove.bind(persistenceId, partition, after))
			.thenCompose((rs) -> {
				Row row = rs.one();
				if (row != null) {
					return CompletableFuture.completedFuture(row.getLong("timestamp"));
				}
				return (partition >= last) ? CompletableFuture.completedFuture(Long.MAX_VALUE)
						: firstStampAbove(persistenceId, after, partition + 1, last);
			});
	}

	/**
	 * The first visible event above {@code after}, up to {@code upTo}'s partition (a replay whose range ends below
	 * deleteTo's mark asks whether an event survived under the mark beyond its range; docs/reliability.md, finding
	 * 22).
	 * @param persistenceId the entity
	 * @param after the end of the range read
	 * @param upTo the last number of interest (the mark): partitions above its own are not read
	 * @return its sequence number (it may lie above {@code upTo}), or {@code Long.MAX_VALUE} if none is visible
	 */
	public CompletionStage<Long> firstAbove(String persistenceId, long after, long upTo) {
		return firstAbove(persistenceId, after, partitionOf(after + 1), partitionOf(Math.max(upTo, after + 1)));
	}

	private CompletionStage<Long> firstAbove(String persistenceId, long after, long partition, long last) {
		return this.session.executeAsync(this.statements.selectFirstAbove.bind(persistenceId, partition, after))
			.thenCompose((rs) -> {
				Row row = rs.one();
				if (row != null) {
					return CompletableFuture.completedFuture(row.getLong("sequence_nr"));
				}
				return (partition >= last) ? CompletableFuture.completedFuture(Long.MAX_VALUE)
						: firstAbove(persistenceId, after, partition + 1, last);
			});
	}

	private static Head head(AsyncResultSet rs) {
		Row row = rs.one();
		if (row == null) {
			return new Head(0, Long.MAX_VALUE);
		}
		return new Head(row.getLong("max_sequence_nr"),
				row.isNull("updated_at") ? Long.MAX_VALUE : row.getLong("updated_at"));
	}

	public CompletionStage<Long> head(String persistenceId) {
		return this.session.executeAsync(this.statements.selectHead.bind(persistenceId)).thenApply((rs) -> {
			Row row = rs.one();
			return (row != null) ? row.getLong("max_sequence_nr") : 0L;
		});
	}

	/**
	 * Replays with payloads as the stored JSON text (for copying rows, such as the tag index backfill).
	 */
	public CompletionStage<Long> replayRaw(String persistenceId, long from, long to,
			Consumer<? super PersistentEvent<String>> consumer) {
		return replay(persistenceId, from, to, null, consumer);
	}

	public <E> CompletionStage<Long> replay(String persistenceId, long from, long to, Class<E> type,
			Consumer<? super PersistentEvent<E>> consumer) {
		return head(persistenceId).thenCompose((head) -> {
			long upper = Math.min(to, head);
			AtomicLong last = new AtomicLong();
			if (upper < from) {
				return CompletableFuture.completedFuture(0L);
			}
			long firstPartition = partitionOf(from);
			long lastPartition = partitionOf(upper);
			return AsyncPaging.forEachRow(partitionReads(persistenceId, firstPartition, lastPartition, from, upper),
					(row) -> last.set(toEvents(persistenceId, row, type, consumer)))
				.thenApply((ignored) -> last.get());
		});
	}

	/**
	 * The reads of partitions {@code first} to {@code last}, in order, each started only when asked for (so the
	 * walk starts the next partition's read when the previous one's last page arrives).
	 */
	Iterator<Supplier<CompletionStage<AsyncResultSet>>> partitionReads(String persistenceId, long first, long last,
			long from, long to) {
		return new Iterator<>() {

			private long partition = first;

			@Override
			public boolean hasNext() {
				return this.partition <= last;
			}

			@Override
			public Supplier<CompletionStage<AsyncResultSet>> next() {
				if (!hasNext()) {
					throw new NoSuchElementException();
				}
				long read = this.partition++;
				return () -> EventReader.this.session
					.executeAsync(EventReader.this.statements.selectEvents.bind(persistenceId, read, from, to));
			}

		};
	}

	public long partitionOf(long sequenceNr) {
		return (sequenceNr - 1) / this.options.partitionSize();
	}

	/**
	 * Hands the row's event to the consumer: one event, or the parts an upcaster split it into, each with the
	 * row's sequence number.
	 * @param row a row of {@code selectEvents}: sequence_nr, timestamp, payload, tags (read by position)
	 * @param type the payload type, {@code null} for the stored JSON text
	 * @return the row's sequence number
	 */
	@SuppressWarnings("unchecked")
	<E> long toEvents(String persistenceId, Row row, @Nullable Class<E> type, Consumer<? super PersistentEvent<E>> consumer) {
		long sequenceNr = RowValues.bigint(row, 0);
		String stored = RowValues.text(row, 2);
		String payload = (stored != null) ? stored : "null";
		List<E> values = (type == null) ? List.of((E) payload)
				: RawEvents.payloads(persistenceId, sequenceNr, payload, this.serializer, type);
		Instant timestamp = Instant.ofEpochMilli(RowValues.bigint(row, 1));
		Set<String> tags = RowValues.textSet(row, 3);
		for (E value : values) {
			consumer.accept(new PersistentEvent<>(persistenceId, sequenceNr, timestamp, tags, value));
		}
		return sequenceNr;
	}

}
