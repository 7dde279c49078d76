package io.cassandrajournal.projection;

import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.journal.PersistentEvent;
import io.cassandrajournal.query.TagOffset;

/**
 * A projection source over an in-memory event log, for runner tests: the offset's time stamp is the position
 * in the log (events before it were handled). Like the real sources, it moves past a batch when it reads it.
 */
final class ScriptedSource implements ProjectionSource {

	/** The log every source of one test reads; append to it to make events visible. */
	static final class Log {

		final List<PersistentEvent<String>> events = new CopyOnWriteArrayList<>();

		final AtomicInteger sourcesCreated = new AtomicInteger();

		final int pageSize;

		/** Whether every append concerns the sources of this log (a wake then schedules a poll). */
		volatile boolean concernsEveryAppend;

		/** Polls made by every source of this log. */
		final AtomicInteger polls = new AtomicInteger();

		/** Polls that read a batch, move past it, then fail (as a feed whose second read failed). */
		final AtomicInteger pollsFailingAfterReading = new AtomicInteger();

		Log(int pageSize) {
			this.pageSize = pageSize;
		}

		Log add(String persistenceId, long sequenceNr) {
			this.events.add(new PersistentEvent<>(persistenceId, sequenceNr, Instant.ofEpochMilli(1000 + this.events.size()),
					Set.of(), "\"" + persistenceId + "#" + sequenceNr + "\""));
			return this;
		}

		ProjectionSource from(TagOffset offset) {
			this.sourcesCreated.incrementAndGet();
			return new ScriptedSource(this, (int) offset.timestamp());
		}

	}

	private final Log log;

	private int position;

	private int beforeBatch;

	private int batchSize;

	private ScriptedSource(Log log, int position) {
		this.log = log;
		this.position = position;
		this.beforeBatch = position;
	}

	@Override
	public CompletionStage<Batch> poll() {
		this.log.polls.incrementAndGet();
		int size = this.log.events.size();
		int end = Math.min(size, this.position + this.log.pageSize);
		List<PersistentEvent<String>> batch = List.copyOf(this.log.events.subList(Math.min(this.position, end), end));
		this.beforeBatch = this.position;
		this.batchSize = batch.size();
		this.position = Math.max(this.position, end);
		if (this.log.pollsFailingAfterReading.getAndDecrement() > 0) {
			return CompletableFuture.failedFuture(new IllegalStateException("second read of the poll timed out"));
		}
		return CompletableFuture.completedFuture(new Batch(batch, this.position >= size));
	}

	@Override
	public TagOffset offsetAfter(int handledInBatch) {
		return new TagOffset(this.beforeBatch + Math.min(handledInBatch, this.batchSize), "", 0);
	}

	@Override
	public CompletionStage<Long> eventsAfter(TagOffset offset, int limit) {
		return CompletableFuture.completedFuture(Math.max(0L, this.log.events.size() - offset.timestamp()));
	}

	@Override
	public boolean concerns(AppendResult result) {
		return this.log.concernsEveryAppend;
	}

}
