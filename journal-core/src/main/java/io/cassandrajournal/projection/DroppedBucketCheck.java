package io.cassandrajournal.projection;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;

import io.cassandrajournal.journal.AppendResult;
import io.cassandrajournal.query.ReadJournal;
import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;

/**
 * Where this fits: wraps a by-tag projection's source (the engine creates one per source) and tells when its cursor
 * lies before a range a retention cleanup dropped with the tag's buckets ({@link ReadJournal#tagDroppedBefore},
 * docs/reliability.md, finding 19): the feed's walk no longer lists those buckets, so their events are never
 * delivered, and this makes it visible ({@link #deleted()}: the projection's status, one INFO line, the health)
 * instead of silent. Before the first poll, and then at most every {@link #RECHECK}, it reads the mark of each tag
 * the filter names (one single-row read each); it never changes what the source delivers.
 * <p>
 * A new mark is compared with the earliest cursor since the marks were read before (docs/reliability.md, finding
 * 22, R3), not only with the current one: a feed that walked past a bucket in the minute between two reads, after
 * the bucket was dropped, missed its events although its cursor is past the mark by the next read. The check can
 * therefore report a range the feed walked before the drop (a cursor behind the mark at one read and past it at the
 * next, with the drop in between): a projection lagging by the whole retention age is told once too often rather
 * than never. The alternative, making {@code dropTagBuckets} wait a {@link #RECHECK} between its mark and its drop,
 * would hold every cleanup for a minute and tie it to the recheck interval of every projection in every process.
 */
final class DroppedBucketCheck implements ProjectionSource {

	/** How often the marks are read again while the projection runs. */
	static final Duration RECHECK = Duration.ofMinutes(1);

	private final ProjectionSource source;

	private final List<String> tags;

	private final ReadJournal query;

	private final Clock clock;

	/** Where the source reads after: the start, then every offset handed out. */
	private TagOffset cursor;

	/** The cursor when the marks were last read (the start before the first read): the walk since began there. */
	private long walkedFrom;

	private final Map<String, Instant> marks = new LinkedHashMap<>();

	/** When the marks were last read (epoch millis); {@link Long#MIN_VALUE} before the first read. */
	private long checkedAt = Long.MIN_VALUE;

	private ProjectionStatus.@Nullable DeletedEvents deleted;

	/**
	 * @param source the tag feed's source
	 * @param filter the projection's filter: its tags are checked
	 * @param start the cursor the source starts after
	 * @param query the read journal that knows the marks
	 * @param clock when to read the marks again
	 * @param walk the projection's memory of the walk since the last read of the marks
	 */
	DroppedBucketCheck(ProjectionSource source, TagFilter filter, TagOffset start, ReadJournal query, Clock clock,
			DroppedBucketWalk walk) {
		this.source = source;
		Set<String> named = new LinkedHashSet<>(filter.anyTags());
		named.addAll(filter.allTags());
		this.tags = List.copyOf(named);
		this.cursor = start;
		this.walkedFrom = start.timestamp();
		this.query = query;
		this.clock = clock;
	}

	@Override
	public CompletionStage<Batch> poll() {
		long now = this.clock.millis();
		boolean due = this.checkedAt == Long.MIN_VALUE || now - this.checkedAt >= RECHECK.toMillis();
		if (!due) {
			compare(this.cursor.timestamp());
			return this.source.poll();
		}
		return readMarks(now).thenCompose((ignored) -> {
			// Any cursor since the last read may have walked across a range dropped since (finding 22, R3).
			compare(Math.min(this.walkedFrom, this.cursor.timestamp()));
			this.walkedFrom = this.cursor.timestamp();
			return this.source.poll();
		});
	}

	private CompletionStage<Void> readMarks(long now) {
		List<CompletableFuture<Optional<Instant>>> reads = new ArrayList<>(this.tags.size());
		for (String tag : this.tags) {
			reads.add(this.query.tagDroppedBefore(tag).toCompletableFuture());
		}
		return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenRun(() -> {
			for (int i = 0; i < this.tags.size(); i++) {
				String tag = this.tags.get(i);
				reads.get(i).join().ifPresent((before) -> this.marks.put(tag, before));
			}
			this.checkedAt = now;
		});
	}

	/**
	 * A cursor before a tag's mark: the events between them were dropped before this projection read them.
	 * @param from the earliest cursor to compare (epoch millis)
	 */
	private void compare(long from) {
		for (Map.Entry<String, Instant> mark : this.marks.entrySet()) {
			if (from < mark.getValue().toEpochMilli()) {
				this.deleted = ProjectionStatus.DeletedEvents.byTag(mark.getKey(), mark.getValue());
			}
		}
	}

	@Override
	public TagOffset offsetAfter(int handledInBatch) {
		TagOffset next = this.source.offsetAfter(handledInBatch);
		this.cursor = next;
		return next;
	}

	@Override
	public CompletionStage<Long> eventsAfter(TagOffset offset, int limit) {
		return this.source.eventsAfter(offset, limit);
	}

	@Override
	public boolean concerns(AppendResult result) {
		return this.source.concerns(result);
	}

	@Override
	public ProjectionStatus.@Nullable DeletedEvents deleted() {
		return this.deleted;
	}

}
