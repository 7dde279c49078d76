package io.cassandrajournal.benchmarks;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import com.datastax.oss.driver.api.core.ConsistencyLevel;
import com.datastax.oss.driver.api.core.ProtocolVersion;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.apache.pekko.Version;
import org.apache.pekko.actor.ActorRef;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.Props;
import org.apache.pekko.persistence.AtomicWrite;
import org.apache.pekko.persistence.JournalProtocol;
import org.apache.pekko.persistence.Persistence;
import org.apache.pekko.persistence.PersistentEnvelope;
import org.apache.pekko.persistence.PersistentRepr;
import org.apache.pekko.persistence.cassandra.query.javadsl.CassandraReadJournal;
import org.apache.pekko.persistence.journal.Tagged;
import org.apache.pekko.persistence.query.Offset;
import org.apache.pekko.persistence.query.PersistenceQuery;
import scala.jdk.javaapi.CollectionConverters;

/**
 * Apache Pekko Persistence Cassandra on the benchmark's node, driven at the level of its journal plugin: an
 * append is one {@code WriteMessages} of one {@code AtomicWrite} to the journal plugin actor (what a persistent
 * actor sends for one {@code persist} of a list of events), a replay is {@code currentEventsByPersistenceId},
 * a tag walk {@code currentEventsByTag} from {@code NoOffset}. Its own keyspace and tables, created by its own
 * {@code keyspace-autocreate}/{@code tables-autocreate}; its own driver session (the plugin builds it from its
 * {@code datastax-java-driver} config) on the same driver jar as ours, set to the protocol version, consistency,
 * page size and request timeout of ours.
 */
final class PekkoPeer implements AutoCloseable {

	private final ActorSystem system;

	private final ActorRef journal;

	private final ActorRef replies;

	private final CassandraReadJournal query;

	private final String writerUuid = UUID.randomUUID().toString();

	/** The append in flight per persistenceId (one at a time per persistenceId, as a persistent actor does). */
	private final Map<String, PekkoActors.Pending> pending = new ConcurrentHashMap<>();

	PekkoPeer(InetSocketAddress contactPoint, String datacenter, String keyspace, ProtocolVersion protocol,
			ConsistencyLevel consistency, int pageSize) {
		this.system = ActorSystem.create("peer", config(contactPoint, datacenter, keyspace, protocol, consistency,
				pageSize, Instant.now()));
		this.journal = Persistence.get(this.system).journalFor("pekko.persistence.cassandra.journal",
				ConfigFactory.empty());
		Map<String, PekkoActors.Pending> inFlight = this.pending;
		this.replies = this.system.actorOf(Props.create(PekkoActors.Replies.class, () -> new PekkoActors.Replies(inFlight)), "replies");
		this.query = PersistenceQuery.get(this.system).getReadJournalFor(CassandraReadJournal.class,
				CassandraReadJournal.Identifier());
	}

	/**
	 * The plugin's settings: everything left at its defaults except the keyspace (autocreated), the driver
	 * settings ours uses (contact point, datacenter, protocol version, consistency, page size, 30 s request
	 * timeout), the read page ({@code query.max-buffer-size}, the number of events fetched per query, 500 by
	 * default) set to our page size, the first tag bucket (default 2015-11-20: a walk from {@code NoOffset}
	 * would query every hour since) set to the hour this run started, and a serializer that writes the payload as
	 * the same JSON as ours, with the same Jackson serializer.
	 */
	static Config config(InetSocketAddress contactPoint, String datacenter, String keyspace, ProtocolVersion protocol,
			ConsistencyLevel consistency, int pageSize, Instant started) {
		String firstBucket = DateTimeFormatter.ofPattern("yyyyMMdd'T'HH:mm")
			.format(started.minus(1, ChronoUnit.HOURS).truncatedTo(ChronoUnit.HOURS).atOffset(ZoneOffset.UTC));
		String hocon = """
				pekko {
				  loglevel = WARNING
				  stdout-loglevel = WARNING
				  actor {
				    serializers.bench-json = "io.cassandrajournal.benchmarks.PekkoJsonSerializer"
				    serialization-bindings { "io.cassandrajournal.benchmarks.AppendWorkloads$Deposited" = bench-json }
				  }
				  persistence {
				    journal.plugin = "pekko.persistence.cassandra.journal"
				    cassandra {
				      journal {
				        keyspace = "%1$s"
				        keyspace-autocreate = true
				        tables-autocreate = true
				      }
				      snapshot.keyspace = "%1$s_snapshot"
				      query.max-buffer-size = %2$d
				      events-by-tag.first-time-bucket = "%3$s"
				    }
				  }
				}
				datastax-java-driver {
				  basic {
				    contact-points = ["%4$s:%5$d"]
				    load-balancing-policy.local-datacenter = "%6$s"
				    request.timeout = 30s
				    request.page-size = %2$d
				  }
				  advanced.protocol.version = %7$s
				  profiles.pekko-persistence-cassandra-profile.basic.request {
				    consistency = %8$s
				    page-size = %2$d
				  }
				}
				""".formatted(keyspace, pageSize, firstBucket, contactPoint.getHostString(), contactPoint.getPort(),
				datacenter, protocol.name(), consistency.name());
		return ConfigFactory.parseString(hocon).withFallback(ConfigFactory.load());
	}

	/** @return the plugin's version, from its jar on the class path */
	static String pluginVersion() {
		return jarVersion("pekko-persistence-cassandra_2.13-");
	}

	/** @return Pekko's version */
	static String pekkoVersion() {
		return Version.current();
	}

	private static String jarVersion(String prefix) {
		for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
			String file = Path.of(entry).getFileName().toString();
			if (file.startsWith(prefix) && file.endsWith(".jar")) {
				return file.substring(prefix.length(), file.length() - ".jar".length());
			}
		}
		return "unknown";
	}

	/**
	 * Appends {@code events} events (tagged with {@code tags} where not empty) to {@code pid} after
	 * {@code expected}, as one atomic write.
	 * @return completes when the journal acknowledged the last event
	 */
	CompletionStage<Void> append(String pid, long expected, int events, Set<String> tags) {
		List<PersistentRepr> reprs = new ArrayList<>(events);
		for (int i = 1; i <= events; i++) {
			Object payload = new AppendWorkloads.Deposited(25);
			reprs.add(PersistentRepr.apply(tags.isEmpty() ? payload : new Tagged(payload, tags), expected + i, pid, "",
					false, ActorRef.noSender(), this.writerUuid));
		}
		CompletableFuture<Void> done = new CompletableFuture<>();
		if (this.pending.putIfAbsent(pid, new PekkoActors.Pending(expected + events, done)) != null) {
			throw new IllegalStateException("an append to " + pid + " is already in flight");
		}
		AtomicWrite write = new AtomicWrite(CollectionConverters.asScala(reprs).toList());
		this.journal.tell(new JournalProtocol.WriteMessages(
				CollectionConverters.asScala(List.<PersistentEnvelope>of(write)).toList(), this.replies, 1),
				ActorRef.noSender());
		return done;
	}

	/**
	 * Recovers {@code pid} as a persistent actor does when it starts: a {@code ReplayMessages} to the journal, whose
	 * highest-sequence-number read also tells the plugin's tag writers that the persistenceId is active (they drop
	 * the tag rows of a persistenceId that was never recovered: seen as "received TagWrite but actor not active"
	 * when appending without it). The recovering actor stays alive, as the persistent actor would.
	 * @return completes with the highest sequence number when the recovery succeeded
	 */
	CompletionStage<Long> recover(String pid) {
		CompletableFuture<Long> done = new CompletableFuture<>();
		ActorRef recovering = this.system.actorOf(Props.create(PekkoActors.Recovering.class, () -> new PekkoActors.Recovering(done)));
		this.journal.tell(new JournalProtocol.ReplayMessages(1L, Long.MAX_VALUE, Long.MAX_VALUE, pid, recovering),
				recovering);
		return done;
	}

	/** @return the events read by {@code currentEventsByPersistenceId}, each deserialized */
	CompletionStage<Long> replay(String pid) {
		AtomicLong count = new AtomicLong();
		return this.query.currentEventsByPersistenceId(pid, 0L, Long.MAX_VALUE)
			.runForeach((envelope) -> {
				AppendWorkloads.Deposited event = (AppendWorkloads.Deposited) envelope.event();
				if (event.amount() != 25) {
					throw new IllegalStateException("unexpected event " + event);
				}
				count.incrementAndGet();
			}, this.system)
			.thenApply((done) -> count.get())
			.toCompletableFuture()
			.orTimeout(5, TimeUnit.MINUTES);
	}

	/** @return the events read by {@code currentEventsByTag} from {@code NoOffset}, each deserialized */
	CompletionStage<Long> walkTag(String tag) {
		AtomicLong count = new AtomicLong();
		return this.query.currentEventsByTag(tag, Offset.noOffset())
			.runForeach((envelope) -> {
				AppendWorkloads.Deposited event = (AppendWorkloads.Deposited) envelope.event();
				if (event.amount() != 25) {
					throw new IllegalStateException("unexpected event " + event);
				}
				count.incrementAndGet();
			}, this.system)
			.thenApply((done) -> count.get())
			.toCompletableFuture()
			.orTimeout(5, TimeUnit.MINUTES);
	}

	/**
	 * Waits until {@code currentEventsByTag} returns {@code expected} events: the plugin writes the tag table after
	 * the events (its tag writers), and its current tag queries stop at now minus
	 * {@code eventual-consistency-delay} (5 s by default).
	 * @return how long it took from the call
	 */
	Duration awaitTag(String tag, long expected, Duration bound) throws InterruptedException {
		long started = System.nanoTime();
		long deadline = started + bound.toNanos();
		long seen = -1;
		Throwable lastFailure = null;
		while (System.nanoTime() < deadline) {
			try {
				seen = walkTag(tag).toCompletableFuture().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
			}
			catch (ExecutionException ex) {
				// A walk over rows still being written may fail (a gap in a persistenceId's tag sequence): try again.
				lastFailure = ex.getCause();
			}
			catch (TimeoutException ex) {
				throw new IllegalStateException("the peer's currentEventsByTag did not complete within " + bound
						+ " (it had shown " + seen + " of " + expected + " events)", ex);
			}
			if (seen == expected) {
				return Duration.ofNanos(System.nanoTime() - started);
			}
			TimeUnit.MILLISECONDS.sleep(500);
		}
		throw new IllegalStateException("the peer's events by tag showed " + seen + " of " + expected + " events of "
				+ tag + " after " + bound, lastFailure);
	}

	@Override
	public void close() throws Exception {
		this.system.terminate();
		this.system.getWhenTerminated().toCompletableFuture().get(30, TimeUnit.SECONDS);
	}

}
