/**
 * JUnit 5 support for tests against real Cassandra nodes started by the project's launcher.
 */
@NullMarked
package io.cassandrajournal.testsupport;

import org.jspecify.annotations.NullMarked;
