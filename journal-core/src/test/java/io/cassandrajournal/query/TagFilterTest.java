package io.cassandrajournal.query;

import java.util.List;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class TagFilterTest {

	@Test
	void plainTagAndAllOfOneTagSelectTheSameEventsButAreDifferentCursors() {
		assertThat(TagFilter.tag("orders").canonical()).isEqualTo("orders");
		assertThat(TagFilter.all("orders").canonical()).isEqualTo("all(orders)");
		assertThat(TagFilter.tag("orders")).isNotEqualTo(TagFilter.all("orders"));
		assertThat(TagFilter.tag("orders").matches(Set.of("orders", "x"))).isTrue();
		assertThat(TagFilter.all("orders").matches(Set.of("orders", "x"))).isTrue();
	}

	@Test
	void canonicalFormIsStableWhateverTheOrderOfTags() {
		TagFilter a = TagFilter.of(List.of("b", "a"), List.of("z", "y"), List.of("n"));
		TagFilter b = TagFilter.of(List.of("a", "b"), List.of("y", "z"), List.of("n"));
		assertThat(a.canonical()).isEqualTo("any(a,b) all(y,z) not(n)").isEqualTo(b.canonical());
		assertThat(TagFilter.of(List.of(), List.of(), List.of()).canonical()).isEqualTo("*");
		assertThat(TagFilter.all("orders").andNot("cancelled").canonical()).isEqualTo("all(orders) not(cancelled)");
	}

	@Test
	void operatorsAreAnded() {
		TagFilter filter = TagFilter.of(List.of("debit", "credit"), List.of("account"), List.of("test"));
		assertThat(filter.matches(Set.of("account", "debit"))).isTrue();
		assertThat(filter.matches(Set.of("account", "credit", "other"))).isTrue();
		assertThat(filter.matches(Set.of("account"))).as("no any tag").isFalse();
		assertThat(filter.matches(Set.of("debit"))).as("missing all tag").isFalse();
		assertThat(filter.matches(Set.of("account", "debit", "test"))).as("has a not tag").isFalse();
		assertThat(TagFilter.of(List.of(), List.of(), List.of()).matches(Set.of())).isTrue();
	}

	@Test
	void rejectsTagsThatWouldMakeTheCanonicalFormAmbiguous() {
		assertThatIllegalArgumentException().isThrownBy(() -> TagFilter.any("a,b"));
		assertThatIllegalArgumentException().isThrownBy(() -> TagFilter.all(" "));
	}

	@Test
	void offsetsAreTotallyOrderedLikeTheTagIndex() {
		TagOffset a = new TagOffset(5, "a", 2);
		assertThat(a).isLessThan(new TagOffset(5, "a", 3)).isLessThan(new TagOffset(5, "b", 1))
			.isLessThan(new TagOffset(6, "", 0))
			.isGreaterThan(TagOffset.START);
		assertThat(new TagOffset(5, "\uE000", 1)).as("UTF-8 order, as Cassandra sorts text")
			.isLessThan(new TagOffset(5, "\uD83D\uDE00", 1));
		String[] samples = { "", "a", "ab", "b", "Z", "\u00e9", "\uE000", "\uFFFF", "\uD83D\uDE00", "a\uD83D\uDE00",
				"a\uE000", "\u4e2d", "account-1", "account-10", "account-2" };
		for (String x : samples) {
			for (String y : samples) {
				int expected = Integer.signum(java.util.Arrays.compareUnsigned(x.getBytes(java.nio.charset.StandardCharsets.UTF_8),
						y.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
				assertThat(Integer.signum(io.cassandrajournal.internal.Utf8Order.compare(x, y))).as(x + " vs " + y)
					.isEqualTo(expected);
			}
		}
	}

}
