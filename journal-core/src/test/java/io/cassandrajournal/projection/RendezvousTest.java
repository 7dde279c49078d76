package io.cassandrajournal.projection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The coordinator-free assignment of segments to instances (a pure function) and the membership watch.
 */
class RendezvousTest {

	private static final List<String> SEGMENTS = SliceRange.split(64).stream().map(SliceRange::key).toList();

	@Test
	void everyInstanceComputesTheSameOwnersWhateverOrderItListsTheMembersIn() {
		Map<String, String> one = Rendezvous.assign("orders", SEGMENTS, List.of("a", "b", "c"));
		Map<String, String> other = Rendezvous.assign("orders", SEGMENTS, List.of("c", "a", "b"));
		assertThat(one).isEqualTo(other);
		assertThat(one.values()).allMatch((owner) -> List.of("a", "b", "c").contains(owner));
	}

	@Test
	void segmentsSpreadEvenlyOverTheMembers() {
		List<String> members = List.of("host-1:8080", "host-2:8080", "host-3:8080", "host-4:8080");
		List<String> segments = SliceRange.split(1024).stream().map(SliceRange::key).toList();
		Map<String, Integer> counts = new HashMap<>();
		Rendezvous.assign("orders", segments, members).values().forEach((owner) -> counts.merge(owner, 1, Integer::sum));
		// 256 each on average; a fair hash stays well within +-20 % (binomial sd is about 14).
		assertThat(counts).hasSize(4);
		assertThat(counts.values()).allMatch((count) -> count > 205 && count < 307);
	}

	@Test
	void aMemberThatLeavesOnlyMovesItsOwnSegmentsAndAJoiningOneOnlyTakes() {
		Map<String, String> before = Rendezvous.assign("orders", SEGMENTS, List.of("a", "b", "c"));
		Map<String, String> withoutB = Rendezvous.assign("orders", SEGMENTS, List.of("a", "c"));
		Map<String, String> withD = Rendezvous.assign("orders", SEGMENTS, List.of("a", "b", "c", "d"));
		int moved = 0;
		for (String segment : SEGMENTS) {
			if (!before.get(segment).equals("b")) {
				assertThat(withoutB.get(segment)).as(segment).isEqualTo(before.get(segment));
			}
			if (!withD.get(segment).equals("d")) {
				assertThat(withD.get(segment)).as(segment).isEqualTo(before.get(segment));
			}
			else {
				moved++;
			}
		}
		assertThat(moved).as("the joining member takes its share, about a quarter").isBetween(8, 24);
	}

	@Test
	void differentProjectionsSpreadDifferently() {
		List<String> members = List.of("a", "b");
		List<String> owners = new ArrayList<>();
		for (String projection : List.of("orders", "balances", "audit", "search")) {
			owners.add(Rendezvous.winner(projection, "0-1023", members));
		}
		assertThat(owners).contains("a", "b");
	}

	@Test
	void aMemberIsLiveOnlyWhileItsBeatKeepsChanging() {
		MemberTable.Watch watch = new MemberTable.Watch("me", Duration.ofSeconds(10));
		long second = Duration.ofSeconds(1).toNanos();
		assertThat(watch.live(Map.of("me", 1L, "other", 7L), 0)).as("first seen: maybe a dead member's row")
			.containsExactly("me");
		assertThat(watch.live(Map.of("me", 2L, "other", 8L), second)).containsExactlyInAnyOrder("me", "other");
		assertThat(watch.live(Map.of("me", 3L, "other", 8L), 10 * second)).containsExactlyInAnyOrder("me", "other");
		assertThat(watch.live(Map.of("me", 4L, "other", 8L), 11 * second)).as("silent for the timeout")
			.containsExactly("me");
		assertThat(watch.live(Map.of("me", 5L, "other", 9L), 12 * second)).containsExactlyInAnyOrder("me", "other");
		assertThat(watch.live(Map.of("me", 6L), 13 * second)).as("its row deleted: left").containsExactly("me");
	}

}
