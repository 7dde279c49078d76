/**
 * The query side: events by tag filter with a feed that does not miss late events, events by
 * persistenceId, and persistenceId streams.
 */
@NullMarked
package io.cassandrajournal.query;

import org.jspecify.annotations.NullMarked;
