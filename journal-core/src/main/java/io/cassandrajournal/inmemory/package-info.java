/**
 * In-memory implementations of the stores, with the same contracts, for unit tests.
 */
@NullMarked
package io.cassandrajournal.inmemory;

import org.jspecify.annotations.NullMarked;
