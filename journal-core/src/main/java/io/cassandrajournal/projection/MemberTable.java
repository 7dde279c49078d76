package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;

import com.datastax.oss.driver.api.core.CqlSession;
import com.datastax.oss.driver.api.core.cql.PreparedStatement;

import io.cassandrajournal.CassandraJournalOptions;
import io.cassandrajournal.internal.AsyncPaging;
import io.cassandrajournal.internal.CqlNames;
import io.cassandrajournal.internal.JournalStatements;
import io.cassandrajournal.internal.SchemaManager;
import io.cassandrajournal.internal.TableDefinition;
import io.cassandrajournal.internal.TableDefinition.Column;

/**
 * The instances running each shared projection, one row per (projection, member) in a table of ours,
 * {@code <durableStateTable>_members} (the TypeScript implementation neither reads nor writes it). Each member
 * writes a new random {@code beat} every renewal interval; a row is written with a TTL only so that the rows of
 * members that died are cleaned up eventually. Liveness is NOT the TTL: {@link Watch} counts a member live while
 * its beat keeps changing within the lease timeout on the watcher's own monotonic clock, as with leases, so no
 * clocks are compared across machines. A graceful stop deletes the member's row.
 */
final class MemberTable {

	private final CqlSession session;

	private final PreparedStatement beat;

	private final PreparedStatement leave;

	private final PreparedStatement list;

	private MemberTable(CqlSession session, CassandraJournalOptions options) {
		this.session = session;
		JournalStatements.Statements s = new JournalStatements.Statements(session, options);
		String table = options.requireKeyspace() + "." + tableName(options);
		this.beat = s.write("INSERT INTO " + table + " (projection, member, beat) VALUES (?, ?, ?) USING TTL ?");
		this.leave = s.write("DELETE FROM " + table + " WHERE projection = ? AND member = ?");
		this.list = s.read("SELECT member, beat FROM " + table + " WHERE projection = ?");
	}

	static MemberTable create(CqlSession session, CassandraJournalOptions options) {
		SchemaManager.ensure(session, options, List.of(table(options)));
		return new MemberTable(session, options);
	}

	static TableDefinition table(CassandraJournalOptions options) {
		String name = tableName(options);
		return new TableDefinition(name, "CREATE TABLE IF NOT EXISTS " + options.requireKeyspace() + "." + name
				+ " (projection text, member text, beat bigint, PRIMARY KEY (projection, member))",
				List.of(Column.partitionKey("projection", "text", 0), Column.clustering("member", "text", 0, "asc"),
						Column.regular("beat", "bigint")));
	}

	private static String tableName(CassandraJournalOptions options) {
		return CqlNames.check("durableStateTable + '_members' (the projection membership table)",
				options.durableStateTable() + "_members");
	}

	/**
	 * @param projection the projection
	 * @param member this instance
	 * @param keepFor how long the row outlives its last beat (clean-up only, not liveness)
	 * @return completes when written
	 */
	CompletionStage<Void> beat(String projection, String member, Duration keepFor) {
		return this.session.executeAsync(this.beat.bind(projection, member, ThreadLocalRandom.current().nextLong(),
				(int) Math.max(1, keepFor.toSeconds()))).thenApply((rs) -> null);
	}

	CompletionStage<Void> leave(String projection, String member) {
		return this.session.executeAsync(this.leave.bind(projection, member)).thenApply((rs) -> null);
	}

	/** @return every member row's current beat (every page of the answer) */
	CompletionStage<Map<String, Long>> list(String projection) {
		Map<String, Long> beats = new HashMap<>();
		// Every page: with more members than a page holds, the members past the first page would count as gone.
		return AsyncPaging.forEachRow(this.session.executeAsync(this.list.bind(projection)),
				(row) -> beats.put(row.getString("member"), row.getLong("beat")))
			.thenApply((ignored) -> beats);
	}

	/**
	 * One instance's view of who is live: a member is live while the beat it writes has changed within the lease
	 * timeout on this instance's clock (a member first seen is not live until its beat changes once, so a row
	 * left by a dead member is never mistaken for a live one). This instance always counts itself.
	 */
	static final class Watch {

		private final String self;

		private final long timeoutNanos;

		private final Map<String, long[]> seen = new HashMap<>();

		Watch(String self, Duration timeout) {
			this.self = self;
			this.timeoutNanos = timeout.toNanos();
		}

		/**
		 * @param beats the member rows as just read
		 * @param nowNanos this instance's clock, read after the read completed
		 * @return the live members
		 */
		synchronized Set<String> live(Map<String, Long> beats, long nowNanos) {
			this.seen.keySet().retainAll(beats.keySet());
			Set<String> live = new HashSet<>();
			live.add(this.self);
			beats.forEach((member, beat) -> {
				long[] last = this.seen.get(member);
				if (last == null) {
					// {beat, when it last changed (unknown yet: never), whether it changed once}
					this.seen.put(member, new long[] { beat, nowNanos, 0 });
					return;
				}
				if (last[0] != beat) {
					last[0] = beat;
					last[1] = nowNanos;
					last[2] = 1;
				}
				if (last[2] == 1 && nowNanos - last[1] < this.timeoutNanos) {
					live.add(member);
				}
			});
			return live;
		}

	}

}
