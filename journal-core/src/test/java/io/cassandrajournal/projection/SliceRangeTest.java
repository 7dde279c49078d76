package io.cassandrajournal.projection;

import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SliceRangeTest {

	@Test
	void theSliceOfAnEntityIsAkkasAndStable() {
		assertThat(SliceRange.sliceOf("account-1")).isEqualTo(Math.abs("account-1".hashCode() % 1024));
		// A persistenceId whose hash code is negative still lands in 0..1023.
		String negative = IntStream.range(0, 1000).mapToObj((i) -> "pid-" + i)
			.filter((pid) -> pid.hashCode() < 0).findFirst().orElseThrow();
		assertThat(SliceRange.sliceOf(negative)).isBetween(0, 1023);
	}

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

	@Test
	void anEntityBelongsToTheRangeOfItsSlice() {
		List<SliceRange> ranges = SliceRange.split(16);
		for (int i = 0; i < 200; i++) {
			String pid = "acct-" + i;
			assertThat(ranges.stream().filter((r) -> r.contains(pid))).hasSize(1);
		}
	}

}
