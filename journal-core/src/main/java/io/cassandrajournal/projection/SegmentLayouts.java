package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

import io.cassandrajournal.query.TagOffset;

/**
 * Where a segment whose cursor was never stored starts when the projection ran before with another number of
 * segments (issue 15: the number of segments can be changed without losing progress). Each segment count is a
 * layout; a range of one layout either lies inside one range of a layout with fewer segments (its ancestor) or
 * is the union of ranges of a layout with more segments (its descendants), because counts are powers of two.
 * <ul>
 * <li>Splitting (4 to 8): each half starts from its ancestor's cursor.</li>
 * <li>Merging (8 to 2): a range starts from the lowest cursor of its descendants, and only when every one of them
 * is stored (a descendant without a cursor may never have been handled): at-least-once, the events between the
 * lowest and the other descendants' cursors are handled again.</li>
 * </ul>
 * Every stored cursor of a layout is a point before which all of its range's events were handled, so each layout
 * gives a sound starting point for the new range, and the highest of them is taken (after 1, 4 and then 8
 * segments, a new layout of 2 starts from the 8-segment cursors rather than the older 4-segment ones). Nothing
 * found: the start.
 * <p>
 * Cost, paid once per segment (only while its own cursor is absent): one read per layout with fewer segments
 * (at most 10), one read of the first descendant per layout with more segments, and the other descendants only of
 * a layout whose first descendant is stored. Only by-tag projections have layouts: a by-persistenceId projection
 * has one segment.
 * <p>
 * A layout used before keeps its own cursors: going back to it (8 to 4 after 4 to 8) resumes from them, which
 * may be older than the cursors of the layout left, so events in between are handled again (at-least-once). A
 * reset is the exception: it deletes the other layouts' cursors of the range ({@link #forgetOtherLayouts}), since
 * they may lie past what the rebuild reached.
 */
final class SegmentLayouts {

	private final ProjectionId projection;

	private final int segments;

	/**
	 * @param projection the projection's own cursor identity (its one-segment key)
	 * @param segments its number of segments now
	 */
	SegmentLayouts(ProjectionId projection, int segments) {
		this.projection = projection;
		this.segments = segments;
		SliceRange.split(segments);
	}

	/**
	 * @param range a range of this layout
	 * @return the cursor identity of that range in a layout of {@code count} segments
	 */
	ProjectionId id(SliceRange range, int count) {
		return (count == 1) ? this.projection : this.projection.segment(range);
	}

	/**
	 * @param range a range of the current layout
	 * @param read reads a stored cursor without side effects on what the caller tracks
	 * @return where the range starts when its own cursor is absent: the highest sound cursor of the other layouts,
	 * or the start when none has one
	 */
	CompletionStage<TagOffset> inherited(SliceRange range,
			Function<ProjectionId, CompletionStage<Optional<TagOffset>>> read) {
		List<CompletableFuture<Optional<TagOffset>>> layouts = new ArrayList<>();
		for (int count = 1; count <= SliceRange.SLICES; count *= 2) {
			if (count < this.segments) {
				layouts.add(ancestor(range, count, read));
			}
			else if (count > this.segments) {
				layouts.add(descendants(range, count, read));
			}
		}
		return CompletableFuture.allOf(layouts.toArray(CompletableFuture[]::new))
			.thenApply((ignored) -> layouts.stream()
				.map(CompletableFuture::join)
				.flatMap(Optional::stream)
				.max(TagOffset::compareTo)
				.orElse(TagOffset.START));
	}

	private CompletableFuture<Optional<TagOffset>> ancestor(SliceRange range, int count,
			Function<ProjectionId, CompletionStage<Optional<TagOffset>>> read) {
		SliceRange parent = SliceRange.split(count).stream().filter((r) -> r.covers(range)).findFirst().orElseThrow();
		return read.apply(id(parent, count)).toCompletableFuture();
	}

	/** @return the lowest cursor of the range's descendants in that layout, empty unless every one is stored */
	private CompletableFuture<Optional<TagOffset>> descendants(SliceRange range, int count,
			Function<ProjectionId, CompletionStage<Optional<TagOffset>>> read) {
		List<SliceRange> parts = SliceRange.split(count).stream().filter(range::covers).toList();
		return read.apply(id(parts.get(0), count)).toCompletableFuture().thenCompose((first) -> {
			if (first.isEmpty()) {
				return CompletableFuture.completedFuture(Optional.<TagOffset>empty());
			}
			List<CompletableFuture<Optional<TagOffset>>> rest = parts.subList(1, parts.size()).stream()
				.map((part) -> read.apply(id(part, count)).toCompletableFuture())
				.toList();
			return CompletableFuture.allOf(rest.toArray(CompletableFuture[]::new)).thenApply((ignored) -> {
				TagOffset lowest = first.get();
				for (CompletableFuture<Optional<TagOffset>> part : rest) {
					Optional<TagOffset> cursor = part.join();
					if (cursor.isEmpty()) {
						return Optional.<TagOffset>empty();
					}
					lowest = (cursor.get().compareTo(lowest) < 0) ? cursor.get() : lowest;
				}
				return Optional.of(lowest);
			});
		});
	}

	/**
	 * An offset store whose {@link #load} of a range's cursor, when absent, is the inherited one, and whose reset to
	 * the start writes the start rather than deleting the cursor (an absent cursor would inherit the other layouts'
	 * progress again after a reset). Without sharing; with sharing the fence does it
	 * ({@link DurableStateOffsetStore#fence}).
	 * @param range a range of the current layout
	 * @param store where the cursors are
	 * @return the store the range's runner uses
	 */
	OffsetStore inheriting(SliceRange range, OffsetStore store) {
		Function<ProjectionId, CompletionStage<Optional<TagOffset>>> read = (id) -> DurableStateOffsetStore
			.peekOrLoad(store, id);
		return new OffsetStore() {

			@Override
			public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
				return store.load(id).thenCompose((stored) -> stored.isPresent()
						? CompletableFuture.completedFuture(stored)
						: inherited(range, read).thenApply(Optional::of));
			}

			@Override
			public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
				return store.save(id, offset);
			}

			@Override
			public CompletionStage<Void> delete(ProjectionId id) {
				return store.save(id, TagOffset.START);
			}

			@Override
			public CompletionStage<Void> reset(ProjectionId id, TagOffset to) {
				return forgetOtherLayouts(range, store).thenCompose((ignored) -> OffsetStore.super.reset(id, to));
			}

		};
	}

	/**
	 * With sharing: the range's fenced cursor, whose reset also forgets the other layouts' cursors of the range.
	 * @param range a range of the current layout
	 * @param cursor the fenced cursor its runner writes through
	 * @param store where the other layouts' cursors are
	 * @return the cursor the range's runner uses
	 */
	OffsetStore resettingEveryLayout(SliceRange range, OffsetStore cursor, OffsetStore store) {
		return new OffsetStore() {

			@Override
			public CompletionStage<Optional<TagOffset>> load(ProjectionId id) {
				return cursor.load(id);
			}

			@Override
			public CompletionStage<Void> save(ProjectionId id, TagOffset offset) {
				return cursor.save(id, offset);
			}

			@Override
			public CompletionStage<Void> delete(ProjectionId id) {
				return cursor.delete(id);
			}

			@Override
			public CompletionStage<Void> reset(ProjectionId id, TagOffset to) {
				return forgetOtherLayouts(range, store).thenCompose((ignored) -> cursor.reset(id, to));
			}

		};
	}

	/** Deletes per round at most, so that a layout of 1,024 ranges does not send a thousand requests at once. */
	private static final int DELETES_AT_ONCE = 64;

	/**
	 * Finding 15 item 8: deletes the cursors of the range's ancestors and descendants in every other layout. A
	 * reset writes the current layout's cursor only; a cursor of another layout left in place would be taken up
	 * again (going back to that layout, or inherited by a later one as the highest sound cursor) and skip what the
	 * rebuild had not reached. Without them, a later layout inherits the rebuild's own progress. Paid once per
	 * reset: up to 2,047 deletes per range (each a read, and a delete of what is there).
	 * @param range a range of the current layout
	 * @param store where the cursors are
	 * @return completes when deleted
	 */
	CompletionStage<Void> forgetOtherLayouts(SliceRange range, OffsetStore store) {
		List<ProjectionId> ids = new ArrayList<>();
		for (int count = 1; count <= SliceRange.SLICES; count *= 2) {
			if (count < this.segments) {
				SliceRange parent = SliceRange.split(count).stream().filter((r) -> r.covers(range)).findFirst()
					.orElseThrow();
				ids.add(id(parent, count));
			}
			else if (count > this.segments) {
				for (SliceRange part : SliceRange.split(count)) {
					if (range.covers(part)) {
						ids.add(id(part, count));
					}
				}
			}
		}
		CompletionStage<Void> rounds = CompletableFuture.completedFuture(null);
		for (int from = 0; from < ids.size(); from += DELETES_AT_ONCE) {
			List<ProjectionId> round = ids.subList(from, Math.min(ids.size(), from + DELETES_AT_ONCE));
			rounds = rounds.thenCompose((ignored) -> CompletableFuture
				.allOf(round.stream().map((each) -> store.delete(each).toCompletableFuture())
					.toArray(CompletableFuture[]::new)));
		}
		return rounds;
	}

}
