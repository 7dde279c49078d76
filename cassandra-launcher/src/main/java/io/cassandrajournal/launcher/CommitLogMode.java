package io.cassandrajournal.launcher;

/**
 * How a launched node syncs its commit log, which decides what survives a {@code SIGKILL}.
 */
public enum CommitLogMode {

	/**
	 * Cassandra's default: the commit log is synced every 10 seconds. Fast, but a write acknowledged
	 * moments before a {@code SIGKILL} of the node can be lost. Right for ordinary tests and local runs.
	 */
	PERIODIC,

	/**
	 * {@code commitlog_sync: batch} with {@code -Dcassandra.skip_sync=true}: every acknowledged write is in
	 * the commit log file before the client hears back, so it survives a {@code SIGKILL} of the node process
	 * (not of the operating system). Use it for crash tests; it costs roughly two thirds of write throughput.
	 */
	BATCH_SKIP_SYNC

}
