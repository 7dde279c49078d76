/**
 * Snapshots that bound the replay of long-lived entities.
 */
@NullMarked
package io.cassandrajournal.snapshot;

import org.jspecify.annotations.NullMarked;
