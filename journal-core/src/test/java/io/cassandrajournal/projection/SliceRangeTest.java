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
		// Computed outside Java (31-based hash over UTF-16 code units, 32-bit wrap, |h % 1024| with the sign of h):
		// "account-1" hashes to -1827030895, "order-42" to 1234255197.
		assertThat(SliceRange.sliceOf("account-1")).isEqualTo(879);
		assertThat(SliceRange.sliceOf("acct-7")).isEqualTo(771);
		assertThat(SliceRange.sliceOf("order-42")).isEqualTo(349);
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
