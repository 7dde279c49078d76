/**
 * @ProjectionHandler bean methods, their discovery and validation, and the lifecycle that runs them.
 */
@NullMarked
package io.cassandrajournal.spring.boot.projection;

import org.jspecify.annotations.NullMarked;
