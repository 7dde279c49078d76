package io.cassandrajournal.projection;

import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.query.TagFilter;
import io.cassandrajournal.query.TagOffset;

import static io.cassandrajournal.testing.Await.result;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Where a segment without a cursor starts after the number of segments changed (see {@link SegmentLayouts});
 * the cursors are in memory, the real-node case is {@code SegmentCountChangeIT}.
 */
class SegmentLayoutsTest {

	private static final ProjectionId ID = ProjectionId.byTag("orders", TagFilter.tag("order"));

	private final InMemoryOffsetStore store = new InMemoryOffsetStore();

	@Test
	void aSplitStartsEachHalfFromItsParentsCursor() {
		save(4, 0, at(40));
		save(4, 1, at(41));
		SegmentLayouts eight = new SegmentLayouts(ID, 8);
		assertThat(inherited(eight, 8, 0)).isEqualTo(at(40));
		assertThat(inherited(eight, 8, 1)).isEqualTo(at(40));
		assertThat(inherited(eight, 8, 2)).isEqualTo(at(41));
		assertThat(inherited(eight, 8, 4)).as("no cursor for that parent").isEqualTo(TagOffset.START);
	}

	@Test
	void oneSegmentIsTheProjectionsOwnCursor() {
		result(this.store.save(ID, at(10)));
		assertThat(inherited(new SegmentLayouts(ID, 4), 4, 3)).isEqualTo(at(10));
		for (int i = 0; i < 4; i++) {
			save(4, i, at(20 + i));
		}
		result(this.store.delete(ID));
		assertThat(inherited(new SegmentLayouts(ID, 1), 1, 0)).as("a merge into one takes the lowest").isEqualTo(at(20));
	}

	@Test
	void aMergeTakesTheLowestOfItsPartsAndOnlyWhenEveryPartHasACursor() {
		save(8, 0, at(30));
		save(8, 1, at(25));
		save(8, 2, at(35));
		SegmentLayouts two = new SegmentLayouts(ID, 2);
		assertThat(inherited(two, 2, 0)).as("part 3-of-8 has no cursor").isEqualTo(TagOffset.START);
		save(8, 3, at(50));
		assertThat(inherited(two, 2, 0)).isEqualTo(at(25));
		assertThat(inherited(two, 2, 1)).isEqualTo(TagOffset.START);
	}

	@Test
	void theMostAdvancedSoundStartingPointOfTheEarlierCountsWins() {
		// History 1 -> 4 -> 8: the old one-segment cursor is behind the 8-segment ones.
		result(this.store.save(ID, at(5)));
		save(4, 0, at(20));
		save(8, 0, at(60));
		save(8, 1, at(70));
		SegmentLayouts two = new SegmentLayouts(ID, 2);
		assertThat(inherited(two, 2, 0)).as("the 4 and 8 counts miss parts: only the one segment counts")
			.isEqualTo(at(5));
		save(4, 1, at(21));
		assertThat(inherited(two, 2, 0)).isEqualTo(at(20));
		save(8, 2, at(80));
		save(8, 3, at(90));
		assertThat(inherited(two, 2, 0)).isEqualTo(at(60));
	}

	@Test
	void theInheritingStoreFallsBackOnlyWithoutAStoredCursorAndResetsToTheStartByWritingIt() {
		save(4, 0, at(40));
		SegmentLayouts eight = new SegmentLayouts(ID, 8);
		SliceRange first = SliceRange.split(8).get(0);
		OffsetStore offsets = eight.inheriting(first, this.store);
		ProjectionId own = ID.segment(first);
		assertThat(result(offsets.load(own))).contains(at(40));
		result(offsets.save(own, at(45)));
		assertThat(result(offsets.load(own))).contains(at(45));
		result(offsets.delete(own));
		assertThat(result(offsets.load(own))).as("a reset is not undone by inheriting again").contains(TagOffset.START);
	}

	@Test
	void aResetForgetsTheOtherCountsCursorsOfItsRangeAndOnlyThose() {
		// History 1 -> 4 -> 8 -> 2 (and 16 before): the range 0-of-2 is reset.
		result(this.store.save(ID, at(5)));
		save(4, 0, at(20));
		save(4, 1, at(21));
		save(4, 2, at(22));
		save(8, 0, at(60));
		save(8, 3, at(63));
		save(8, 4, at(64));
		save(16, 7, at(77));
		SegmentLayouts two = new SegmentLayouts(ID, 2);
		SliceRange first = SliceRange.split(2).get(0);
		ProjectionId own = ID.segment(first);
		result(two.inheriting(first, this.store).reset(own, TagOffset.START));
		assertThat(result(this.store.load(own))).as("its own cursor: the start").contains(TagOffset.START);
		assertThat(result(this.store.load(ID))).as("the one-segment cursor, an ancestor").isEmpty();
		assertThat(load(4, 0)).isEmpty();
		assertThat(load(4, 1)).isEmpty();
		assertThat(load(8, 0)).isEmpty();
		assertThat(load(8, 3)).isEmpty();
		assertThat(load(16, 7)).isEmpty();
		assertThat(load(4, 2)).as("another range's").contains(at(22));
		assertThat(load(8, 4)).as("another range's").contains(at(64));

		save(4, 0, at(20));
		InMemoryOffsetStore fenced = new InMemoryOffsetStore();
		result(two.resettingEveryLayout(first, fenced, this.store).reset(own, at(3)));
		assertThat(result(fenced.load(own))).as("the fenced cursor is written").contains(at(3));
		assertThat(load(4, 0)).isEmpty();
	}

	private Optional<TagOffset> load(int segments, int index) {
		return result(this.store.load(ID.segment(SliceRange.split(segments).get(index))));
	}

	private TagOffset inherited(SegmentLayouts layouts, int segments, int index) {
		return result(layouts.inherited(SliceRange.split(segments).get(index), this.store::load));
	}

	private void save(int segments, int index, TagOffset offset) {
		result(this.store.save(ID.segment(SliceRange.split(segments).get(index)), offset));
	}

	private static TagOffset at(long timestamp) {
		return new TagOffset(timestamp, "", Long.MAX_VALUE);
	}

}
