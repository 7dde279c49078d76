package io.cassandrajournal.query;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import io.cassandrajournal.internal.DroppedBucketMarks;
import io.cassandrajournal.internal.WarnOnce;

/**
 * The drop-mark check of tag queries read from a bucketed tag index (docs/reliability.md, finding 23). Where this
 * fits: {@link CassandraReadJournal} asks it, beside each page or streamed query, whether the query reads from before
 * a range a retention cleanup dropped.
 * <p>
 * <b>Paged queries</b> ({@code currentEventsByTag}, one call per page) read the marks of the filter's tags at their
 * first page only, not at every page: a page that starts where an earlier page of the same filter ended
 * ({@code resumeAfter}) continues that query and reuses its marks. That is sound because a mark only moves forward:
 * a page whose start lies before a mark already read lies before the current mark too. What the reused marks cannot
 * show is a drop made during the query, so the marks are read again, after the page, at the query's caught-up page,
 * and before any page once they are {@link #RECHECK} old; each such read is compared with the earliest page start
 * since the previous read (as {@code DroppedBucketCheck} does for projections), so a drop that removed rows from
 * any page the query read since is reported then. A query of N pages thus reads the marks twice (its first and its
 * last page; once if it has one page), not N times. A read that failed counts as no mark and is not reused.
 */
final class TagDropChecks {

	/** How long a paged query reuses the marks it read before it reads them again. */
	static final Duration RECHECK = Duration.ofSeconds(10);

	/** Paged queries remembered at once (the least recently continued is forgotten: it reads the marks again). */
	private static final int QUERIES = 1_000;

	private static final Logger logger = LoggerFactory.getLogger(CassandraReadJournal.class);

	private final DroppedBucketMarks marks;

	private final Clock clock;

	/** Dropped ranges queries read from before: logged once each. */
	private final WarnOnce warnings = new WarnOnce(10_000);

	/** The marks of paged queries, by where their next page starts. */
	private final Map<Continuation, Read> queries = new LinkedHashMap<Continuation, Read>(64, 0.75f, true) {

		@Override
		protected boolean removeEldestEntry(Map.Entry<Continuation, Read> eldest) {
			return size() > QUERIES;
		}

	};

	TagDropChecks(DroppedBucketMarks marks, Clock clock) {
		this.marks = marks;
		this.clock = clock;
	}

	/**
	 * One page of a paged query with its {@link EventsPage#dropped()} set (see the class comment).
	 * @param filter the filter
	 * @param after where the page starts
	 * @param pageRead the page's read, started by the caller
	 * @return the page, with {@code dropped} set when the query read from before a dropped range
	 */
	CompletionStage<EventsPage<String>> page(TagFilter filter, TagOffset after,
			CompletionStage<EventsPage<String>> pageRead) {
		long now = this.clock.millis();
		Read prior = take(filter, after);
		if (prior == null || !prior.complete() || now - prior.readAtMillis() >= RECHECK.toMillis()) {
			// A new query, or marks too old or incomplete: read them beside the page.
			return pageRead.thenCombine(read(filter), (events, read) -> {
				keep(filter, events.resumeAfter(), new Read(read.marks(), now, after, read.complete()));
				return withDropped(events, dropped(filter, after, prior, read.marks()));
			});
		}
		return pageRead.thenCompose((events) -> {
			if (!events.caughtUp()) {
				keep(filter, events.resumeAfter(),
						new Read(prior.marks(), prior.readAtMillis(), earlier(prior.earliest(), after), true));
				return CompletableFuture.completedFuture(withDropped(events, dropped(filter, after, null, prior.marks())));
			}
			// The query's last page: a drop made during the query is seen now (its mark is written before its
			// buckets are dropped, so every bucket missing from a page read before this read has its mark).
			long at = this.clock.millis();
			return read(filter).thenApply((read) -> {
				keep(filter, events.resumeAfter(), new Read(read.marks(), at, events.resumeAfter(), read.complete()));
				return withDropped(events, dropped(filter, after, prior, read.marks()));
			});
		});
	}

	/**
	 * The check of a query made in one call ({@code forEachCurrentEventByTag}): the marks read once, beside it.
	 * @param filter the filter
	 * @param after where the query starts
	 * @return the first dropped range the query reads from before, or {@code null}
	 */
	CompletionStage<@Nullable DroppedTagRange> once(TagFilter filter, TagOffset after) {
		return read(filter).thenApply((read) -> dropped(filter, after, null, read.marks()));
	}

	private static EventsPage<String> withDropped(EventsPage<String> page, @Nullable DroppedTagRange dropped) {
		return (dropped == null) ? page
				: new EventsPage<>(page.events(), page.resumeAfter(), page.caughtUp(), dropped);
	}

	private static TagOffset earlier(TagOffset a, TagOffset b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	private synchronized @Nullable Read take(TagFilter filter, TagOffset after) {
		return this.queries.remove(new Continuation(filter.canonical(), after));
	}

	private synchronized void keep(TagFilter filter, TagOffset resumeAfter, Read read) {
		this.queries.put(new Continuation(filter.canonical(), resumeAfter), read);
	}

	/**
	 * The mark of every tag the filter names, read at once (one single-row read each). Never fails: a mark that
	 * cannot be read counts as none (finding 23, Review, item 1), and the result is then not complete.
	 */
	private CompletionStage<Marks> read(TagFilter filter) {
		LinkedHashSet<String> named = new LinkedHashSet<>(filter.anyTags());
		named.addAll(filter.allTags());
		List<String> tags = List.copyOf(named);
		List<CompletableFuture<Optional<Instant>>> reads = new ArrayList<>(tags.size());
		for (String tag : tags) {
			reads.add(this.marks.droppedBefore(tag).toCompletableFuture());
		}
		return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).handle((ignored, error) -> {
			Map<String, Optional<Instant>> read = new LinkedHashMap<>();
			boolean complete = true;
			for (int i = 0; i < tags.size(); i++) {
				Optional<Instant> mark = markOrNull(filter, tags.get(i), reads.get(i));
				complete &= mark != null;
				read.put(tags.get(i), (mark != null) ? mark : Optional.empty());
			}
			return new Marks(read, complete);
		});
	}

	/**
	 * Every tag whose mark lies after the query's start is logged (once per tag and range); the first is returned.
	 * The start is the page's own, except for a mark that moved since the {@code prior} read (a drop made since):
	 * then the earliest page start since that read, so a page read from before the new mark with the old marks is
	 * reported too.
	 */
	private @Nullable DroppedTagRange dropped(TagFilter filter, TagOffset after, @Nullable Read prior,
			Map<String, Optional<Instant>> marks) {
		DroppedTagRange first = null;
		for (Map.Entry<String, Optional<Instant>> entry : marks.entrySet()) {
			Optional<Instant> mark = entry.getValue();
			boolean moved = prior != null && !mark.equals(prior.marks().getOrDefault(entry.getKey(), Optional.empty()));
			TagOffset from = moved ? earlier(prior.earliest(), after) : after;
			if (mark.isPresent() && from.timestamp() < mark.get().toEpochMilli()) {
				DroppedTagRange dropped = new DroppedTagRange(entry.getKey(), mark.get());
				if (this.warnings.first(dropped.tag() + "#" + dropped.droppedBefore())) {
					logger.warn("Tag query '{}' reads from {}, before a dropped range: {} (JournalCleanup.dropTagBuckets); "
							+ "they stay in the journal but are not in this query's result (docs/reliability.md, finding 23)",
							filter.canonical(), Instant.ofEpochMilli(from.timestamp()), dropped.describe());
				}
				first = (first != null) ? first : dropped;
			}
		}
		return first;
	}

	/**
	 * A tag's drop mark, or {@code null} if its read failed: the mark is diagnostic, so a failed read costs the query
	 * its report, not its result (a streamed query would otherwise fail after delivering its events, and a caller
	 * that retried would handle them twice). Logged at WARN once per tag, then at DEBUG.
	 */
	private @Nullable Optional<Instant> markOrNull(TagFilter filter, String tag,
			CompletableFuture<Optional<Instant>> read) {
		try {
			return read.join();
		}
		catch (RuntimeException ex) {
			Throwable cause = (ex instanceof CompletionException && ex.getCause() != null) ? ex.getCause() : ex;
			if (this.warnings.first("failed#" + tag)) {
				logger.warn("Tag query '{}': reading the drop mark of tag '{}' failed ({}); the query's result is "
						+ "complete, but it cannot tell whether it reads from before a range a retention cleanup dropped "
						+ "(logged once per tag, then at DEBUG)", filter.canonical(), tag, cause.toString());
			}
			else {
				logger.debug("Tag query '{}': reading the drop mark of tag '{}' failed ({})", filter.canonical(), tag,
						cause.toString());
			}
			return null;
		}
	}

	/** Where a paged query's next page starts. */
	private record Continuation(String filter, TagOffset resumeAfter) {
	}

	/**
	 * @param marks the marks, by tag (empty: none, or not readable)
	 * @param readAtMillis when they were read (the clock of the read journal)
	 * @param earliest the earliest page start since they were read
	 * @param complete whether every mark was read
	 */
	private record Read(Map<String, Optional<Instant>> marks, long readAtMillis, TagOffset earliest,
			boolean complete) {
	}

	private record Marks(Map<String, Optional<Instant>> marks, boolean complete) {
	}

}
