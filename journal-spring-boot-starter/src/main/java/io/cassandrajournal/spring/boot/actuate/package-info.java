/**
 * The projections actuator endpoint.
 */
@NullMarked
package io.cassandrajournal.spring.boot.actuate;

import org.jspecify.annotations.NullMarked;
