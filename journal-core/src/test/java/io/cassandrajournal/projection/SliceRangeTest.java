package io.cassandrajournal.projection;

import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

import io.cassandrajournal.SliceHash;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SliceRangeTest {

	@ParameterizedTest
	@ValueSource(ints = { 1, 2, 4, 16, 1024 })
	void rangesCoverEverySliceOnceAndDoublingSplitsEachRangeExactly(int segments) {
		List<SliceRange> ranges = SliceRange.split(segments);
		assertThat(ranges).hasSize(segments);
		for (int slice = 0; slice < SliceRange.SLICES; slice++) {
			int s = slice;
			assertThat(ranges.stream().filter((r) -> r.from() <= s && s <= r.to())).hasSize(1);
		}
		if (segments < SliceRange.SLICES) {
			for (SliceRange half : SliceRange.split(segments * 2)) {
				assertThat(ranges.stream().filter((r) -> r.covers(half))).hasSize(1);
			}
		}
		for (SliceRange range : ranges) {
			assertThat(SliceRange.parse(range.key())).isEqualTo(range);
		}
	}

	@ParameterizedTest
	@ValueSource(ints = { 0, 3, 12, 2048, -4 })
	void aSegmentCountThatIsNotAPowerOfTwoUpTo1024IsRefusedWithTheRule(int segments) {
		assertThatIllegalArgumentException().isThrownBy(() -> SliceRange.split(segments))
			.withMessageContaining("power of two");
	}

	@ParameterizedTest
	@EnumSource(SliceHash.class)
	void anEntityBelongsToTheRangeOfItsSlice(SliceHash hash) {
		List<SliceRange> ranges = SliceRange.split(16);
		for (int i = 0; i < 200; i++) {
			int slice = hash.slice("acct-" + i);
			assertThat(ranges.stream().filter((r) -> r.contains(slice))).hasSize(1);
		}
	}

}
