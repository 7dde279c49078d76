/**
 * Internal: Cassandra statements, schema handling and helpers. Not API; may change in any release.
 */
@NullMarked
package io.cassandrajournal.internal;

import org.jspecify.annotations.NullMarked;
