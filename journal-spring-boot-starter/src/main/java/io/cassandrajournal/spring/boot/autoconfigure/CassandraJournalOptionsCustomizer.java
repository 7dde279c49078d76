package io.cassandrajournal.spring.boot.autoconfigure;

import io.cassandrajournal.CassandraJournalOptions;

/**
 * Adjusts the {@link CassandraJournalOptions} built from {@code journal.cassandra.*} before any store is
 * created, for settings that have no property (an {@code SSLContext}, a {@code Clock}). Applied in
 * {@code @Order}.
 */
@FunctionalInterface
public interface CassandraJournalOptionsCustomizer {

	/**
	 * @param options the options so far
	 * @return the options to use
	 */
	CassandraJournalOptions customize(CassandraJournalOptions options);

}
