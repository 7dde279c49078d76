package io.cassandrajournal.projection;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.projection.SharedProjectionRun.Save;
import io.cassandrajournal.query.TagOffset;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The cursor rules {@link SharedProjectionRun} checks after a multi-JVM run catch each kind of bad write, and a
 * clean history (owner changes, a refused write of a stale owner, a cut-short line) passes.
 */
class SharedProjectionRunTest {

	private static final List<String> SEGMENTS = SliceRange.split(SharedProjectionRun.SEGMENTS).stream()
		.map(SliceRange::key)
		.toList();

	private final List<Save> saves = new ArrayList<>();

	private final Map<String, String> ownerByEpoch = new HashMap<>();

	SharedProjectionRunTest() {
		// Every segment: a-0 under epoch 1, then b-1 takes over under epoch 2 (fence writes twice, then saves).
		for (String segment : SEGMENTS) {
			save("a-0", segment, 1, 1, 0, Save.APPLIED);
			save("a-0", segment, 2, 1, 5, Save.APPLIED);
			save("b-1", segment, 3, 2, 5, Save.APPLIED);
			save("b-1", segment, 4, 2, 5, Save.APPLIED);
			save("b-1", segment, 5, 2, 9, Save.APPLIED);
			this.ownerByEpoch.put(segment + "@1", "a-0");
			this.ownerByEpoch.put(segment + "@2", "b-1");
		}
	}

	private void save(String instance, String segment, long revision, long epoch, long sequenceNr, String outcome) {
		this.saves.add(new Save(instance, "projection-offset|p|segment(" + segment + "):t", revision, epoch,
				new TagOffset(1000 + sequenceNr, "pid", sequenceNr), outcome));
	}

	private List<String> check() {
		return SharedProjectionRun.checkSaves(this.saves, this.ownerByEpoch);
	}

	@Test
	void theRunsEntitiesFallInEverySegmentEqually() {
		// Ids that differ only in a counted suffix (tag-account-0 .. 63) have nearby slices: they fell in 3 to 6
		// of the 16 segments, so most segments of the run never had an event to hand over.
		String tag = "multi-jvm-" + System.nanoTime();
		Map<Integer, Integer> perSegment = new HashMap<>();
		for (int i = 0; i < SharedProjectionRun.ENTITIES; i++) {
			int slice = SharedProjectionRun.SLICE_HASH.slice(SharedProjectionRun.entity(tag, i));
			perSegment.merge(slice / (SliceRange.SLICES / SharedProjectionRun.SEGMENTS), 1, Integer::sum);
		}
		assertThat(perSegment).as(tag).hasSize(SharedProjectionRun.SEGMENTS);
		assertThat(perSegment.values()).as(tag)
			.containsOnly(SharedProjectionRun.ENTITIES / SharedProjectionRun.SEGMENTS);
	}

	@Test
	void aCleanHistoryWithARefusedStaleWritePasses() {
		save("a-0", SEGMENTS.get(0), 3, 1, 7, Save.REFUSED);
		save("a-0", SEGMENTS.get(0), 3, 1, 7, Save.UNKNOWN);
		assertThat(check()).isEmpty();
	}

	@Test
	void aCursorMovedBackIsAViolation() {
		save("b-1", SEGMENTS.get(3), 6, 2, 8, Save.APPLIED);
		assertThat(check()).singleElement().asString().contains("cursor moved back");
	}

	@Test
	void aWriteUnderAnOlderEpochAfterANewerOneIsAViolation() {
		save("a-0", SEGMENTS.get(3), 6, 1, 12, Save.APPLIED);
		assertThat(check()).anyMatch((v) -> v.contains("epoch went down"));
	}

	@Test
	void aWriteByAnInstanceThatDidNotHoldTheEpochIsAViolation() {
		save("c-2", SEGMENTS.get(5), 6, 2, 12, Save.APPLIED);
		assertThat(check()).anyMatch((v) -> v.contains("epoch 2 written by b-1"))
			.anyMatch((v) -> v.contains("the lease row gave epoch 2 to b-1"));
	}

	@Test
	void twoWritesAppliedAtOneRevisionAreAViolation() {
		save("b-1", SEGMENTS.get(7), 5, 2, 9, Save.APPLIED);
		assertThat(check()).singleElement().asString().contains("one revision");
	}

	@Test
	void aSegmentWithoutAppliedWritesIsAViolation() {
		this.saves.removeIf((s) -> s.key().contains("segment(" + SEGMENTS.get(0) + ")"));
		assertThat(check()).singleElement().asString().contains("applied writes on 15 cursors");
	}

	@Test
	void aLineCutShortByAKillIsSkipped() {
		Save save = this.saves.get(0);
		assertThat(Save.parse(save.line())).contains(save);
		assertThat(Save.parse(save.line().substring(0, save.line().length() - 3))).isEmpty();
	}

}
