/**
 * Actuator health indicators of the journal.
 */
@NullMarked
package io.cassandrajournal.spring.boot.health;

import org.jspecify.annotations.NullMarked;
