package io.cassandrajournal.spring.boot.autoconfigure;

import java.time.Duration;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

import io.cassandrajournal.retention.RetentionPolicy;

/**
 * The retention policy that the {@code retention} actuator endpoint runs ({@code journal.cassandra.retention.*});
 * defaults are {@link RetentionPolicy#NONE}'s.
 */
@ConfigurationProperties("journal.cassandra.retention")
public class JournalRetentionProperties {

	/**
	 * Snapshots kept per entity; the events up to the oldest kept one and the older snapshots are deleted. 0 keeps
	 * everything.
	 */
	private int keepSnapshots;

	/**
	 * Age beyond which whole buckets of the bucketed tag index are dropped (tag bucketing only); unset keeps them.
	 */
	private @Nullable Duration tagBucketsOlderThan;

	/**
	 * Entities worked on at once.
	 */
	private int parallelism = RetentionPolicy.NONE.parallelism();

	/**
	 * PersistenceIds read per page; the run's position is stored after each page.
	 */
	private int pageSize = RetentionPolicy.NONE.pageSize();

	public int getKeepSnapshots() {
		return this.keepSnapshots;
	}

	public void setKeepSnapshots(int keepSnapshots) {
		this.keepSnapshots = keepSnapshots;
	}

	public @Nullable Duration getTagBucketsOlderThan() {
		return this.tagBucketsOlderThan;
	}

	public void setTagBucketsOlderThan(@Nullable Duration tagBucketsOlderThan) {
		this.tagBucketsOlderThan = tagBucketsOlderThan;
	}

	public int getParallelism() {
		return this.parallelism;
	}

	public void setParallelism(int parallelism) {
		this.parallelism = parallelism;
	}

	public int getPageSize() {
		return this.pageSize;
	}

	public void setPageSize(int pageSize) {
		this.pageSize = pageSize;
	}

}
