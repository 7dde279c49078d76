/**
 * A key-value store with revisions and compare-and-set updates (durable state).
 */
@NullMarked
package io.cassandrajournal.state;

import org.jspecify.annotations.NullMarked;
