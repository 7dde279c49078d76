/**
 * Cassandra Journal: an event-sourcing journal on Apache Cassandra. Start with
 * {@link io.cassandrajournal.CassandraJournalOptions} and {@link io.cassandrajournal.CassandraPersistence}.
 */
@NullMarked
package io.cassandrajournal;

import org.jspecify.annotations.NullMarked;
