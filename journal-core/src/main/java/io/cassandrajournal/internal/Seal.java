package io.cassandrajournal.internal;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;
import com.datastax.oss.driver.api.core.cql.Statement;
import org.jspecify.annotations.Nullable;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * Where this fits: the one seal of claimed numbers that have no event (docs/reliability.md, findings 13 and 15), used
 * by the replay's step over a crash gap ({@code ContiguousReplay}), the writer's settle of its own uncertain append
 * ({@code UncertainAppends}) and the live tag feed's check of late tag rows ({@code LateTagRows}). Use it only where
 * {@link SealConditions} hold.
 * <p>
 * A seal is a range deletion in the events table ({@code DELETE ... USING TIMESTAMP ?}), one per events partition the
 * range spans, each clamped to the numbers of the range in its partition. Its write time is the rule that makes it
 * final ({@link #writeTime}): at least the claim's time plus {@code in-flight-wait} (in microseconds), because an
 * append's rows carry a write time taken before its claim and its writer acknowledges them only within
 * {@code in-flight-wait} of that claim, so a batch of the sealed numbers that lands later, from the batch log or a
 * slow coordinator, is shadowed wherever it lands; and at least the driver's now, so that a delete of the same
 * append's tag rows with the same write time shadows them too.
 * <p>
 * It also remembers the ranges it sealed ({@link #sealedBefore}, a bounded memo of {@value #MEMO_SIZE} per seal, with
 * the write time of each), so that a reader meeting the same gap again need not write it again; callers that never
 * ask take a seal {@linkplain #withoutMemo without that memo}.
 */
public final class Seal {

	/** The most ranges remembered as sealed ({@link #sealedBefore}). */
	public static final int MEMO_SIZE = 10_000;

	private final CqlSession session;

	private final CassandraJournalOptions options;

	private final PreparedStatement delete;

	/**
	 * Ranges this seal wrote, least recently met first, with the write time (microseconds) they were sealed with.
	 * Only a written seal is remembered. Bounded: a forgotten range is sealed again, which is harmless. Null for a
	 * seal {@link #withoutMemo}.
	 */
	private final @Nullable Map<Range, Long> sealed;

	private record Range(String persistenceId, long from, long to) {
	}

	/**
	 * Prepares the seal's statement (blocking: call it where the journal prepares its others).
	 * @param session the journal's session
	 * @param options the journal's options
	 */
	public Seal(CqlSession session, CassandraJournalOptions options) {
		this(session, options, true);
	}

	private Seal(CqlSession session, CassandraJournalOptions options, boolean remember) {
		this.session = session;
		this.options = options;
		this.sealed = remember ? Collections.synchronizedMap(new LinkedHashMap<>(16, 0.75f, true) {
			@Override
			protected boolean removeEldestEntry(Map.Entry<Range, Long> eldest) {
				return size() > MEMO_SIZE;
			}
		}) : null;
		this.delete = new JournalStatements.Statements(session, options).write("DELETE FROM "
				+ options.requireKeyspace() + "." + options.eventsTable() + " USING TIMESTAMP ? WHERE persistence_id = ? "
				+ "AND partition_nr = ? AND sequence_nr >= ? AND sequence_nr <= ?");
	}

	/**
	 * A seal that remembers nothing ({@link #sealedBefore} is always false): for callers that never ask it, the
	 * writer's settle of its uncertain appends and the live tag feed's check of late rows, which would otherwise each
	 * keep up to {@value #MEMO_SIZE} ranges for nothing. Prepares its statement as the constructor does.
	 * @param session the journal's session
	 * @param options the journal's options
	 * @return the seal
	 */
	public static Seal withoutMemo(CqlSession session, CassandraJournalOptions options) {
		return new Seal(session, options, false);
	}

	/**
	 * @param claimedAt no earlier than the sealed numbers' claim (epoch millis of the claiming writer's clock)
	 * @return the least write time (microseconds) a seal of those numbers must have: the claim's time plus the
	 * in-flight wait ({@link Long#MIN_VALUE} when that overflows, as for a head without {@code updated_at})
	 */
	public long floor(long claimedAt) {
		long waitMillis = this.options.inFlightWait().toMillis();
		return (claimedAt >= Long.MAX_VALUE / 1000 - waitMillis) ? Long.MIN_VALUE : (claimedAt + waitMillis) * 1000;
	}

	/**
	 * @param claimedAt no earlier than the sealed numbers' claim (epoch millis of the claiming writer's clock)
	 * @return the seal's write time in microseconds: at least {@link #floor}, and at least the driver's now (the
	 * system clock when the driver leaves time stamps to the server)
	 */
	public long writeTime(long claimedAt) {
		long now = this.session.getContext().getTimestampGenerator().next();
		if (now == Statement.NO_DEFAULT_TIMESTAMP) {
			now = System.currentTimeMillis() * 1000;
		}
		return Math.max(floor(claimedAt), now);
	}

	/**
	 * @param persistenceId the entity
	 * @param from the first sealed number
	 * @param to the last sealed number
	 * @param claimedAt no earlier than their claim
	 * @return whether this seal wrote exactly that range before with a write time of at least {@link #floor}: then it
	 * need not be written again (the same numbers claimed again later need a new seal; review 2 of finding 15, item 2);
	 * always false {@link #withoutMemo}
	 */
	public boolean sealedBefore(String persistenceId, long from, long to, long claimedAt) {
		Map<Range, Long> memo = this.sealed;
		if (memo == null) {
			return false;
		}
		Long writeTime = memo.get(new Range(persistenceId, from, to));
		return writeTime != null && writeTime >= floor(claimedAt);
	}

	/**
	 * Writes the seal of {@code from..to}: one range deletion per events partition, in parallel.
	 * @param persistenceId the entity
	 * @param from the first number to seal
	 * @param to the last number to seal
	 * @param writeTime the seal's write time, from {@link #writeTime}
	 * @return completes when every partition's deletion is written (then the range is remembered, but
	 * {@link #withoutMemo}); fails if one fails
	 */
	public CompletionStage<Void> write(String persistenceId, long from, long to, long writeTime) {
		long partitionSize = this.options.partitionSize();
		List<CompletableFuture<?>> deletes = new ArrayList<>();
		for (long partition = (from - 1) / partitionSize; partition <= (to - 1) / partitionSize; partition++) {
			long first = Math.max(from, partition * partitionSize + 1);
			long last = Math.min(to, (partition + 1) * partitionSize);
			deletes.add(this.session.executeAsync(this.delete.bind(writeTime, persistenceId, partition, first, last))
				.toCompletableFuture());
		}
		Map<Range, Long> memo = this.sealed;
		CompletableFuture<Void> written = CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new));
		return (memo == null) ? written : written.thenRun(() -> memo.put(new Range(persistenceId, from, to), writeTime));
	}

}
