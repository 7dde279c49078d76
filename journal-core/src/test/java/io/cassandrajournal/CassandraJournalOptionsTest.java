package io.cassandrajournal;

import java.time.Instant;
import java.util.List;

import org.junit.jupiter.api.Test;

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
