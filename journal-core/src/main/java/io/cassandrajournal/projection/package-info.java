/**
 * Projections: handlers fed from a tag filter or a persistenceId, from a stored offset, at-least-once,
 * with recovery strategies, dead letters, control and metrics.
 */
@NullMarked
package io.cassandrajournal.projection;

import org.jspecify.annotations.NullMarked;
