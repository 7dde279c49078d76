/**
 * An embedded real Cassandra node for development and tests, started through the project's launcher.
 */
@NullMarked
package io.cassandrajournal.spring.boot.embedded;

import org.jspecify.annotations.NullMarked;
