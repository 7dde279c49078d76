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
 * <p>
 * That earliest cursor, the marks and when they were read are the projection's ({@link DroppedBucketWalk}, kept by
 * the engine), not this check's: the runner creates a new source, so a new check, from the stored offset after any
 * failed batch, and a failed read of the marks fails the poll without moving the walk on (docs/reliability.md,
 * finding 23, Review, item 3). A new check therefore compares the whole walk since the last successful read, and
 * reads the marks when that read is a {@link #RECHECK} old, not at once.
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

	/**
	 * The projection's memory, kept across the sources its runner creates: the earliest cursor since the marks were
	 * last read successfully, when that was, and the marks (finding 23, Review, item 3).
	 */
	private final DroppedBucketWalk walk;

	private ProjectionStatus.@Nullable DeletedEvents deleted;

	/**
	 * @param source the tag feed's source
	 * @param filter the projection's filter: its tags are checked
	 * @param start the cursor the source starts after
	 * @param query the read journal that knows the marks
	 * @param clock when to read the marks again
	 * @param walk the projection's memory of the walk since the last read of the marks (one per projection, or per
	 * segment, kept by the engine: its runner creates a new source after a failed batch)
	 */
	DroppedBucketCheck(ProjectionSource source, TagFilter filter, TagOffset start, ReadJournal query, Clock clock,
			DroppedBucketWalk walk) {
		this.source = source;
		Set<String> named = new LinkedHashSet<>(filter.anyTags());
		named.addAll(filter.allTags());
		this.tags = List.copyOf(named);
		this.cursor = start;
		this.query = query;
		this.clock = clock;
		this.walk = walk;
	}

	@Override
	public CompletionStage<Batch> poll() {
		long now = this.clock.millis();
		// The start counts from the first poll (a source made only to count events never adds to the walk).
		this.walk.walked(this.cursor.timestamp());
		long checkedAt = this.walk.checkedAt();
		boolean due = checkedAt == Long.MIN_VALUE || now - checkedAt >= RECHECK.toMillis();
		if (!due) {
			compare(this.walk.marks(), this.cursor.timestamp());
			return this.source.poll();
		}
		// A failed read fails the poll and leaves the walk as it was: the next check compares it (finding 23, item 3).
		return readMarks().thenCompose((read) -> {
			// Any cursor since the last read may have walked across a range dropped since (finding 23, R3).
			long from = Math.min(this.walk.walkedFrom(), this.cursor.timestamp());
			this.walk.checked(read, now, this.cursor.timestamp());
			compare(this.walk.marks(), from);
			return this.source.poll();
		});
	}

	private CompletionStage<Map<String, Instant>> readMarks() {
		List<CompletableFuture<Optional<Instant>>> reads = new ArrayList<>(this.tags.size());
		for (String tag : this.tags) {
			reads.add(this.query.tagDroppedBefore(tag).toCompletableFuture());
		}
		return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply((ignored) -> {
			Map<String, Instant> read = new LinkedHashMap<>();
			for (int i = 0; i < this.tags.size(); i++) {
				String tag = this.tags.get(i);
				reads.get(i).join().ifPresent((before) -> read.put(tag, before));
			}
			return read;
		});
	}

	/**
	 * A cursor before a tag's mark: the events between them were dropped before this projection read them.
	 * @param marks the marks known (tag to mark)
	 * @param from the earliest cursor to compare (epoch millis)
	 */
	private void compare(Map<String, Instant> marks, long from) {
		for (Map.Entry<String, Instant> mark : marks.entrySet()) {
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
