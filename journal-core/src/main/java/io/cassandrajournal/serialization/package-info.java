/**
 * How event payloads become the JSON text stored in Cassandra, and back.
 */
@NullMarked
package io.cassandrajournal.serialization;

import org.jspecify.annotations.NullMarked;
