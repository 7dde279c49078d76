/**
 * Retention and cleanup: deleting whole entities, events before a kept snapshot, old tag index buckets, and a
 * policy run over every entity with a dry-run report and a resumable position.
 */
@NullMarked
package io.cassandrajournal.retention;

import org.jspecify.annotations.NullMarked;
