/**
 * Micrometer meters of the journal's projections.
 */
@NullMarked
package io.cassandrajournal.spring.boot.metrics;

import org.jspecify.annotations.NullMarked;
