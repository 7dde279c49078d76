/**
 * Auto-configuration of the journal, its stores and its session from journal.cassandra.* properties.
 */
@NullMarked
package io.cassandrajournal.spring.boot.autoconfigure;

import org.jspecify.annotations.NullMarked;
