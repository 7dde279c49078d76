package io.cassandrajournal.benchmarks;

import java.util.Map;
import java.util.concurrent.CompletableFuture;

import org.apache.pekko.actor.AbstractActor;
import org.apache.pekko.persistence.JournalProtocol;
import org.apache.pekko.persistence.PersistentRepr;

/** The actors that receive the peer's journal replies for {@link PekkoPeer}. */
final class PekkoActors {

	private PekkoActors() {
	}

	/** An append in flight: completes when the journal acknowledged its last sequence number. */
	record Pending(long lastSequenceNr, CompletableFuture<Void> done) {
	}

	/** Stands for a persistent actor during its recovery, and stays alive afterwards. */
	static final class Recovering extends AbstractActor {

		private final CompletableFuture<Long> done;

		Recovering(CompletableFuture<Long> done) {
			this.done = done;
		}

		@Override
		public Receive createReceive() {
			return receiveBuilder()
				.match(JournalProtocol.RecoverySuccess.class, (reply) -> this.done.complete(reply.highestSequenceNr()))
				.match(JournalProtocol.ReplayMessagesFailure.class,
						(reply) -> this.done.completeExceptionally(reply.cause()))
				.matchAny((other) -> {
				})
				.build();
		}

	}

	/** Completes the pending appends from the journal's replies (sent to the requestor of each write). */
	static final class Replies extends AbstractActor {

		private final Map<String, Pending> pending;

		Replies(Map<String, Pending> pending) {
			this.pending = pending;
		}

		@Override
		public Receive createReceive() {
			return receiveBuilder()
				.match(JournalProtocol.WriteMessageSuccess.class, (reply) -> {
					PersistentRepr repr = reply.persistent();
					Pending p = this.pending.get(repr.persistenceId());
					if (p != null && p.lastSequenceNr() == repr.sequenceNr()) {
						this.pending.remove(repr.persistenceId());
						p.done().complete(null);
					}
				})
				.match(JournalProtocol.WriteMessageRejected.class,
						(reply) -> fail(reply.message().persistenceId(), reply.cause()))
				.match(JournalProtocol.WriteMessageFailure.class,
						(reply) -> fail(reply.message().persistenceId(), reply.cause()))
				.matchAny((other) -> {
				})
				.build();
		}

		private void fail(String pid, Throwable cause) {
			Pending p = this.pending.remove(pid);
			if (p != null) {
				p.done().completeExceptionally(cause);
			}
		}

	}

}
