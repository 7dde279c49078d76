/**
 * The event journal: appends with optimistic concurrency, replay, the crash-window check.
 */
@NullMarked
package io.cassandrajournal.journal;

import org.jspecify.annotations.NullMarked;
