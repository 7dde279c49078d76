package io.cassandrajournal;

import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.cassandrajournal.internal.TagSlices;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class CassandraJournalOptionsTest {

	@Test
	void tagBucketingNamesItsTablesAfterTheIndexAndTheUnit() {
		CassandraJournalOptions options = CassandraJournalOptions.create();
		assertThat(options.tagBucketing()).isEqualTo(TagBucketing.NONE);
		assertThat(options.tagIndexDataTable()).isEqualTo("events_by_tag");
		CassandraJournalOptions daily = options.withTagIndexTable("Orders_Tags").withTagBucketing(TagBucketing.DAY);
		assertThat(daily.tagIndexDataTable()).isEqualTo("orders_tags_day");
		assertThat(daily.tagBucketsTable()).isEqualTo("orders_tags_day_buckets");
	}

	@Test
	void tagBucketingRejectsIndexNamesThatLeaveNoRoomForTheSuffix() {
		String longName = "a".repeat(40);
		CassandraJournalOptions options = CassandraJournalOptions.create().withTagIndexTable(longName);
		assertThatIllegalArgumentException().isThrownBy(() -> options.withTagBucketing(TagBucketing.MINUTE))
			.withMessageContaining("tagIndexTable")
			.withMessageContaining("at most 33 characters");
		CassandraJournalOptions hourly = CassandraJournalOptions.create().withTagBucketing(TagBucketing.HOUR);
		assertThatIllegalArgumentException().isThrownBy(() -> hourly.withTagIndexTable(longName))
			.withMessageContaining("too long for tag bucketing HOUR");
	}

	@Test
	void tagSliceGroupsArePowersOfTwoAndNameTheirTableWithOrWithoutBuckets() {
		CassandraJournalOptions options = CassandraJournalOptions.create();
		assertThat(options.tagSliceGroups()).isZero();
		CassandraJournalOptions sliced = options.withTagIndexTable("Orders_Tags").withTagSliceGroups(16);
		assertThat(sliced.tagSliceGroups()).isEqualTo(16);
		assertThat(sliced.tagIndexSlicedTable()).isEqualTo("orders_tags_sliced16");
		assertThat(sliced.tagIndexDataTable()).isEqualTo("orders_tags");
		assertThat(options.withTagSliceGroups(1024).tagSliceGroups()).isEqualTo(1024);
		assertThat(sliced.withTagSliceGroups(0).tagSliceGroups()).isZero();
		for (int bad : new int[] { -1, 1, 3, 12, 2048 }) {
			assertThatIllegalArgumentException().isThrownBy(() -> options.withTagSliceGroups(bad))
				.withMessageContaining("tagSliceGroups must be 0 (off) or a power of two from 2 to 1024, was " + bad);
		}
		// With tag bucketing, the sliced copies are bucketed too: the bucketed table's name with the sliced suffix.
		assertThat(sliced.withTagBucketing(TagBucketing.HOUR).tagIndexSlicedTable())
			.isEqualTo("orders_tags_hour_sliced16");
		assertThat(options.withTagBucketing(TagBucketing.DAY).withTagSliceGroups(16).tagIndexSlicedTable())
			.isEqualTo("events_by_tag_day_sliced16");
		assertThatIllegalArgumentException().isThrownBy(() -> sliced.withTagIndexTable("a".repeat(40)))
			.withMessageContaining("would exceed 48 characters");
		// 33 characters fit "_sliced16" and "_minute_buckets" but not "_minute_sliced16", whichever option comes last.
		CassandraJournalOptions longName = options.withTagIndexTable("a".repeat(33));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> longName.withTagSliceGroups(16).withTagBucketing(TagBucketing.MINUTE))
			.withMessageContaining("with tag bucketing MINUTE")
			.withMessageContaining("would exceed 48 characters");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> longName.withTagBucketing(TagBucketing.MINUTE).withTagSliceGroups(16))
			.withMessageContaining("would exceed 48 characters");
	}

	@Test
	void aSlicesGroupIsItsSliceFoldedIntoTheGroups() {
		for (String id : new String[] { "a", "account-7", "x".repeat(30), "\u00e9t\u00e9" }) {
			for (SliceHash hash : SliceHash.values()) {
				int slice = hash.slice(id);
				assertThat(TagSlices.sliceOf(hash, id)).isEqualTo(slice);
				assertThat(TagSlices.groupOf(hash, id, 16)).isEqualTo(slice / 64);
				assertThat(TagSlices.groupOf(hash, id, 1024)).isEqualTo(slice);
			}
			assertThat(SliceHash.STRING_HASH.slice(id)).isEqualTo(Math.abs(id.hashCode() % 1024));
		}
		// Unset by default: adopted from the keyspace's record (LayoutRecord); until then, and for a new keyspace,
		// the well-mixed function. Set, it is what was set.
		assertThat(CassandraJournalOptions.create().sliceHash()).isEqualTo(SliceHash.MURMUR3);
		assertThat(CassandraJournalOptions.create().configuredSliceHash()).isEmpty();
		assertThat(CassandraJournalOptions.create().withSliceHash(SliceHash.STRING_HASH).sliceHash())
			.isEqualTo(SliceHash.STRING_HASH);
		assertThat(CassandraJournalOptions.create().withSliceHash(SliceHash.MURMUR3).configuredSliceHash())
			.contains(SliceHash.MURMUR3);
		// A segment of n <= groups segments covers groups / n whole groups; a smaller one lies in one group.
		assertThat(TagSlices.firstGroup(256, 511, 16)).isEqualTo(4);
		assertThat(TagSlices.lastGroup(256, 511, 16)).isEqualTo(7);
		assertThat(TagSlices.firstGroup(992, 1023, 16)).isEqualTo(15);
		assertThat(TagSlices.lastGroup(992, 1023, 16)).isEqualTo(15);
	}

	@Test
	void bucketsStartAtWholeUnitsInUtc() {
		long t = Instant.parse("2026-03-01T10:15:30.250Z").toEpochMilli();
		assertThat(Instant.ofEpochMilli(TagBucketing.MINUTE.bucketOf(t))).isEqualTo("2026-03-01T10:15:00Z");
		assertThat(Instant.ofEpochMilli(TagBucketing.HOUR.bucketOf(t))).isEqualTo("2026-03-01T10:00:00Z");
		assertThat(Instant.ofEpochMilli(TagBucketing.DAY.bucketOf(t))).isEqualTo("2026-03-01T00:00:00Z");
		assertThat(TagBucketing.NONE.bucketOf(t)).isZero();
	}

	@Test
	void inFlightWaitDefaultsToThirtySecondsAndRejectsNegativeValues() {
		CassandraJournalOptions options = CassandraJournalOptions.create();
		assertThat(options.inFlightWait()).isEqualTo(java.time.Duration.ofSeconds(30));
		assertThat(options.withInFlightWait(java.time.Duration.ZERO).inFlightWait()).isZero();
		assertThatIllegalArgumentException().isThrownBy(() -> options.withInFlightWait(java.time.Duration.ofSeconds(-1)))
			.withMessageContaining("inFlightWait");
	}

	/**
	 * Review of finding 21, items 4-7: a wait above zero but under the writer's deadline margin (5 ms) made the
	 * deadline negative, so every append was reported uncertain; one under 100 ms leaves the writer no time. Zero
	 * (seals off) stays allowed.
	 */
	@Test
	void inFlightWaitRejectsPositiveValuesUnderOneHundredMilliseconds() {
		CassandraJournalOptions options = CassandraJournalOptions.create();
		for (java.time.Duration tooShort : List.of(java.time.Duration.ofNanos(1), java.time.Duration.ofMillis(4),
				java.time.Duration.ofMillis(99))) {
			assertThatIllegalArgumentException().isThrownBy(() -> options.withInFlightWait(tooShort))
				.withMessageContaining("inFlightWait")
				.withMessageContaining("100ms");
		}
		assertThat(options.withInFlightWait(java.time.Duration.ofMillis(100)).inFlightWait())
			.isEqualTo(java.time.Duration.ofMillis(100));
		assertThat(options.withInFlightWait(java.time.Duration.ZERO).inFlightWait()).isZero();
	}

	@Test
	void claimSettleTimeDefaultsToCoverPaxosV1AndRejectsValuesOutsideOneSecondToAMinute() {
		CassandraJournalOptions options = CassandraJournalOptions.create();
		assertThat(options.claimSettleTime()).isEqualTo(java.time.Duration.ofSeconds(6));
		assertThat(options.withClaimSettleTime(java.time.Duration.ZERO).claimSettleTime()).isZero();
		assertThat(options.withClaimSettleTime(java.time.Duration.ofSeconds(7)).withKeyspace("k").claimSettleTime())
			.isEqualTo(java.time.Duration.ofSeconds(7));
		assertThat(options.withClaimSettleTime(java.time.Duration.ofSeconds(1)).claimSettleTime())
			.isEqualTo(java.time.Duration.ofSeconds(1));
		assertThat(options.withClaimSettleTime(java.time.Duration.ofMinutes(1)).claimSettleTime())
			.isEqualTo(java.time.Duration.ofMinutes(1));
		for (java.time.Duration outside : List.of(java.time.Duration.ofMillis(-1), java.time.Duration.ofMillis(999),
				java.time.Duration.ofMinutes(1).plusNanos(1), java.time.Duration.ofSeconds(Long.MAX_VALUE))) {
			assertThatIllegalArgumentException().isThrownBy(() -> options.withClaimSettleTime(outside))
				.withMessageContaining("claimSettleTime");
		}
	}

}
